package io.mstar.messaging;

import java.util.function.Function;

import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

import io.mstar.deployment.ConfigDigest;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WireFormatException;
import io.mstar.wire.WorkerMessage;

/**
 * Decodes the records of a control topic, the conductor's ({@link #conductor}) or a worker's ({@link #worker}),
 * after the same checks: every {@code mstar-*} header present and readable, the
 * sender's config digest equal to ours, then the JSON decode. Anything else fails with a
 * {@link ControlRecordRejectedException} carrying the dead-letter reason; the listener container's
 * {@code ErrorHandlingDeserializer} turns that into a dead-lettered record instead of a stuck partition.
 * Stateless and thread-safe.
 */
public final class ControlMessageDeserializer<M> implements Deserializer<M> {

    private final ConfigDigest expectedConfig;
    private final Function<byte[], M> decode;

    private ControlMessageDeserializer(ConfigDigest expectedConfig, Function<byte[], M> decode) {
        this.expectedConfig = expectedConfig;
        this.decode = decode;
    }

    /** For the conductor topic. {@code codec} is shared, not owned: it holds no resources. */
    public static ControlMessageDeserializer<ConductorMessage> conductor(WireCodec codec, ConfigDigest expectedConfig) {
        return new ControlMessageDeserializer<>(expectedConfig, codec::decodeConductorMessage);
    }

    /** For a worker topic. {@code codec} is shared, not owned: it holds no resources. */
    public static ControlMessageDeserializer<WorkerMessage> worker(WireCodec codec, ConfigDigest expectedConfig) {
        return new ControlMessageDeserializer<>(expectedConfig, codec::decodeWorkerMessage);
    }

    /** Without headers a record cannot be checked; only the headers variant is ever legitimate. */
    @Override
    public M deserialize(String topic, byte[] data) {
        throw new ControlRecordRejectedException(DeadLetterReason.MISSING_HEADER, "record on " + topic + " has no headers");
    }

    @Override
    public M deserialize(String topic, Headers headers, byte[] data) {
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
            return decode.apply(data);
        } catch (WireFormatException e) {
            throw new ControlRecordRejectedException(DeadLetterReasons.fromWire(e.reason()),
                    "from " + stamp.sender() + " at " + e.jsonPath() + ": " + e.getMessage(), e);
        }
    }
}
