package io.mstar.wire;

/** A body the conductor receives; its {@link ConductorMessageType} follows from the class. */
public sealed interface ConductorMessageBody extends MessageBody
        permits AbortRequest, FailRequests, NewRequestConductor, ReadsDone, ResultTensors, SetupDone,
        WorkerGraphsDone {
}
