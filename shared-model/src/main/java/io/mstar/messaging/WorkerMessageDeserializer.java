package io.mstar.messaging;

import io.mstar.deployment.ConfigDigest;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerMessage;

/** Decodes records on a worker topic; see {@link ControlMessageDeserializer} for the checks. */
public final class WorkerMessageDeserializer extends ControlMessageDeserializer<WorkerMessage> {

    private final WireCodec codec;

    /** {@code codec} is shared, not owned: it holds no resources. */
    public WorkerMessageDeserializer(WireCodec codec, ConfigDigest expectedConfig) {
        super(expectedConfig);
        this.codec = codec;
    }

    @Override
    WorkerMessage decode(byte[] json) {
        return codec.decodeWorkerMessage(json);
    }
}
