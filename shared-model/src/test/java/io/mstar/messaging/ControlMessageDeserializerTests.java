package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import io.mstar.deployment.ConfigDigest;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.MessageSource;
import io.mstar.wire.SetupDone;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WireFormatException;
import io.mstar.wire.WorkerMessage;

class ControlMessageDeserializerTests {

    private static final ConfigDigest OURS = new ConfigDigest("aaaa");
    private final WireCodec codec = new WireCodec();
    private final ControlMessageDeserializer<WorkerMessage> workerDeserializer = ControlMessageDeserializer.worker(codec, OURS);
    private final ControlMessageDeserializer<ConductorMessage> conductorDeserializer =
            ControlMessageDeserializer.conductor(codec, OURS);

    private static Headers headers(ConfigDigest digest) {
        Headers headers = new RecordHeaders();
        ControlHeaders.write(headers, new ControlHeaders.Stamp(EntityId.worker(1), new Incarnation("01"), 42L, digest));
        return headers;
    }

    @Test
    void aValidRecordDecodesToTheMessage() {
        ConductorMessage setupDone = ConductorMessage.of(new SetupDone("worker-1"));
        WorkerMessage drain = WorkerMessage.of(new DrainRequest("r-1", MessageSource.CONDUCTOR));

        assertThat(conductorDeserializer.deserialize("t", headers(OURS), codec.encode(setupDone))).isEqualTo(setupDone);
        assertThat(workerDeserializer.deserialize("t", headers(OURS), codec.encode(drain))).isEqualTo(drain);
    }

    @Test
    void anotherConfigDigestIsAConfigMismatchEvenForValidJson() {
        byte[] valid = codec.encode(ConductorMessage.of(new SetupDone("worker-1")));

        assertRejected(() -> conductorDeserializer.deserialize("t", headers(new ConfigDigest("bbbb")), valid),
                DeadLetterReason.CONFIG_MISMATCH);
    }

    @Test
    void aRecordWithoutControlHeadersIsAMissingHeaderRejection() {
        byte[] valid = codec.encode(ConductorMessage.of(new SetupDone("worker-1")));

        assertRejected(() -> conductorDeserializer.deserialize("t", new RecordHeaders(), valid), DeadLetterReason.MISSING_HEADER);
        assertRejected(() -> conductorDeserializer.deserialize("t", valid), DeadLetterReason.MISSING_HEADER);
    }

    @Test
    void aNullValueIsMalformed() {
        assertRejected(() -> workerDeserializer.deserialize("t", headers(OURS), (byte[]) null), DeadLetterReason.MALFORMED_JSON);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            {not json                                                              | MALFORMED_JSON
            {"message_type":"no_such_type","body":{}}                              | UNKNOWN_MESSAGE_TYPE
            {"message_type":"setup_done","body":{}}                                | MISSING_FIELD
            {"message_type":"setup_done","body":{"worker_id":7}}                   | WRONG_TYPE
            {"message_type":"setup_done","body":{"worker_id":"worker-1"}} trailing | TRAILING_DATA
            """)
    void decodeFailuresKeepTheCodecsReason(String json, DeadLetterReason expected) {
        assertRejected(() -> conductorDeserializer.deserialize("t", headers(OURS), json.getBytes(StandardCharsets.UTF_8)), expected);
    }

    @Test
    void overDeepDocumentsAreTooDeep() {
        String deep = "{\"message_type\":\"setup_done\",\"body\":{\"worker_id\":\"w\",\"x\":"
                + "[".repeat(WireCodec.MAX_NESTING_DEPTH + 5) + "]".repeat(WireCodec.MAX_NESTING_DEPTH + 5) + "}}";

        assertRejected(() -> conductorDeserializer.deserialize("t", headers(OURS), deep.getBytes(StandardCharsets.UTF_8)),
                DeadLetterReason.TOO_DEEP);
    }

    @ParameterizedTest
    @EnumSource(WireFormatException.Reason.class)
    void everyCodecReasonHasItsOwnDeadLetterReason(WireFormatException.Reason reason) {
        assertThat(DeadLetterReasons.fromWire(reason)).isNotEqualTo(DeadLetterReason.UNKNOWN);
        assertThat(DeadLetterReasons.fromWire(reason).name()).isEqualTo(reason.name());
    }

    @Test
    void noCodecReasonIsLeftWithoutAMapping() {
        assertThat(Arrays.stream(WireFormatException.Reason.values()).map(DeadLetterReasons::fromWire))
                .doesNotContain(DeadLetterReason.UNKNOWN)
                .doesNotHaveDuplicates();
        assertThat(DeadLetterReasons.fromWire(null)).isEqualTo(DeadLetterReason.UNKNOWN);
    }

    private static void assertRejected(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, DeadLetterReason reason) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ControlRecordRejectedException.class,
                e -> assertThat(e.reason()).isEqualTo(reason));
    }
}
