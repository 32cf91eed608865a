package io.mstar.wire;

/** A body a worker receives; its {@link WorkerMessageType} follows from the class. */
public sealed interface WorkerMessageBody extends MessageBody
        permits CollectiveBootstrap, ConductorHeartbeat, DrainRequest, InputSignals, NewRequest, RemoveRequest, ScheduleTPNode, StopLoops,
        TensorReceived, TPNoSpeculation, UnpersistTensors {
}
