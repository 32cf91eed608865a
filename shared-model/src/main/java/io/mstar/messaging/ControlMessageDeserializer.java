package io.mstar.messaging;

import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

import io.mstar.deployment.ConfigDigest;
import io.mstar.wire.WireFormatException;

/**
 * The shared checks of both control deserializers: every {@code mstar-*} header present and readable, the
 * sender's config digest equal to ours, then the JSON decode. Anything else fails with a
 * {@link ControlRecordRejectedException} carrying the dead-letter reason; the listener container's
 * {@code ErrorHandlingDeserializer} turns that into a dead-lettered record instead of a stuck partition.
 * Stateless and thread-safe.
 */
abstract class ControlMessageDeserializer<M> implements Deserializer<M> {

    private final ConfigDigest expectedConfig;

    ControlMessageDeserializer(ConfigDigest expectedConfig) {
        this.expectedConfig = expectedConfig;
    }

    /** Without headers a record cannot be checked; only the headers variant is ever legitimate. */
    @Override
    public final M deserialize(String topic, byte[] data) {
        throw new ControlRecordRejectedException(DeadLetterReason.MISSING_HEADER, "record on " + topic + " has no headers");
    }

    @Override
    public final M deserialize(String topic, Headers headers, byte[] data) {
        if (headers == null) {
            return deserialize(topic, data);
        }
        ControlHeaders.Stamp stamp = ControlHeaders.read(headers);
        if (!stamp.config().equals(expectedConfig)) {
            throw new ControlRecordRejectedException(DeadLetterReason.CONFIG_MISMATCH, "record from " + stamp.sender()
                    + " has config " + stamp.config().hex() + ", this receiver runs " + expectedConfig.hex());
        }
        if (data == null) {
            throw new ControlRecordRejectedException(DeadLetterReason.MALFORMED_JSON, "record from " + stamp.sender() + " has no value");
        }
        try {
            return decode(data);
        } catch (WireFormatException e) {
            throw new ControlRecordRejectedException(DeadLetterReasons.fromWire(e.reason()),
                    "from " + stamp.sender() + " at " + e.jsonPath() + ": " + e.getMessage(), e);
        }
    }

    abstract M decode(byte[] json);
}
