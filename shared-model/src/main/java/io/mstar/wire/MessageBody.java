package io.mstar.wire;

/** The body of a control message: one record per message type, exactly as the spec names it. */
public sealed interface MessageBody permits WorkerMessageBody, ConductorMessageBody {
}
