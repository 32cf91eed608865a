package io.mstar.messaging;

import io.mstar.deployment.ConfigDigest;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WireCodec;

/** Decodes records on the conductor topic; see {@link ControlMessageDeserializer} for the checks. */
public final class ConductorMessageDeserializer extends ControlMessageDeserializer<ConductorMessage> {

    private final WireCodec codec;

    /** {@code codec} is shared, not owned: it holds no resources. */
    public ConductorMessageDeserializer(WireCodec codec, ConfigDigest expectedConfig) {
        super(expectedConfig);
        this.codec = codec;
    }

    @Override
    ConductorMessage decode(byte[] json) {
        return codec.decodeConductorMessage(json);
    }
}
