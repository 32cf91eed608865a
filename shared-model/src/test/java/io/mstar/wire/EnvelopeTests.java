package io.mstar.wire;

import io.mstar.wire.WireFormatException.Reason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class EnvelopeTests {

    private final WireCodec codec = new WireCodec();

    @ParameterizedTest
    @EnumSource(WorkerMessageType.class)
    void ofDerivesEveryWorkerTypeFromItsBody(WorkerMessageType type) {
        WorkerMessage m = GoldenMessages.worker().get(type);
        assertThat(WorkerMessage.of(m.body()).messageType()).isEqualTo(type);
        assertThat(type.bodyType()).isEqualTo(m.body().getClass());
        assertThat(WorkerMessageType.fromValue(type.value())).isEqualTo(type);
    }

    @ParameterizedTest
    @EnumSource(ConductorMessageType.class)
    void ofDerivesEveryConductorTypeFromItsBody(ConductorMessageType type) {
        ConductorMessage m = GoldenMessages.conductor().get(type);
        assertThat(ConductorMessage.of(m.body()).messageType()).isEqualTo(type);
        assertThat(type.bodyType()).isEqualTo(m.body().getClass());
        assertThat(ConductorMessageType.fromValue(type.value())).isEqualTo(type);
    }

    @Test
    void unknownWireValuesHaveNoEnumConstant() {
        assertThat(WorkerMessageType.fromValue("unpersist_tensors")).isNull();
        assertThat(WorkerMessageType.fromValue("unpersist")).isEqualTo(WorkerMessageType.UNPERSIST_TENSORS);
        assertThat(ConductorMessageType.fromValue("NEW_REQUEST")).isNull();
        assertThat(Status.fromValue("in_progress")).isEqualTo(Status.IN_PROGRESS);
        assertThat(Status.fromValue("IN_PROGRESS")).isNull();
        assertThat(MessageSource.fromCode(1)).isEqualTo(MessageSource.TP_RANK_0);
        assertThat(MessageSource.fromCode(3)).isNull();
        assertThat(MessageSource.fromCode(-1)).isNull();
        assertThatThrownBy(() -> WorkerMessageType.forBody(AbortRequest.class)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anEnvelopeRejectsABodyOfAnotherType() {
        assertThatThrownBy(() -> new WorkerMessage(WorkerMessageType.REMOVE_REQUEST, new DrainRequest("r")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ConductorMessage(ConductorMessageType.SETUP_DONE, new AbortRequest("r")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new WorkerMessage(WorkerMessageType.DRAIN_REQUEST, null))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void bodiesAboutOneRequestExposeItsIdForTheKafkaKey() {
        for (WorkerMessage m : GoldenMessages.worker().values()) {
            boolean scoped = !(m.body() instanceof ScheduleTPNode) && !(m.body() instanceof TPNoSpeculation)
                    && !(m.body() instanceof ConductorHeartbeat) && !(m.body() instanceof CollectiveBootstrap);
            assertThat(m.body() instanceof RequestScoped).as(m.messageType().value()).isEqualTo(scoped);
        }
        for (ConductorMessage m : GoldenMessages.conductor().values()) {
            boolean scoped = !(m.body() instanceof SetupDone) && !(m.body() instanceof FailRequests);
            assertThat(m.body() instanceof RequestScoped).as(m.messageType().value()).isEqualTo(scoped);
        }
        assertThat(((RequestScoped) new ReadsDone("req-9", "worker-1")).requestId()).isEqualTo("req-9");
    }

    @Test
    void aBodyBeforeItsMessageTypeStillDecodes() {
        byte[] json = ("{\"body\": {\"request_id\": \"r\", \"source\": 1}, \"message_type\": \"drain_request\"}")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(codec.decodeWorkerMessage(json)).isEqualTo(WorkerMessage.of(new DrainRequest("r", MessageSource.TP_RANK_0)));
    }

    @Test
    void errorsInABodyBeforeItsMessageTypeCarryTheBodyPath() {
        byte[] json = ("{\"body\": {\"request_id\": \"r\", \"successful_tensors\": [[1, \"x\"]], \"failed_tensor_ids\": []},"
                + " \"message_type\": \"tensor_received\"}").getBytes(StandardCharsets.UTF_8);
        WireFormatException e = catchThrowableOfType(WireFormatException.class, () -> codec.decodeWorkerMessage(json));
        assertThat(e.reason()).isEqualTo(Reason.WRONG_TYPE);
        assertThat(e.jsonPath()).isEqualTo("$.body.successful_tensors[0][1]");
    }

    @Test
    void encodeRejectsDoublesThatAreNotFinite() {
        WorkerGraphsDone nan = new WorkerGraphsDone("r", List.of(), true, null, null, null, null, null, false, null, null,
                null, List.of(new io.mstar.profile.RxInfo("e", "a", "b", 1, 1, Double.NaN)), null);
        assertThatThrownBy(() -> codec.encode(ConductorMessage.of(nan))).isInstanceOf(IllegalArgumentException.class);
        io.mstar.profile.GraphTiming infinite = new io.mstar.profile.GraphTiming("n", "w", 1, Double.POSITIVE_INFINITY, 0, 0, 0);
        WorkerGraphsDone inf = new WorkerGraphsDone("r", List.of(), true, null, null, null, null, null, false, null, null,
                Map.of(infinite.key(), infinite), null, null);
        assertThatThrownBy(() -> codec.encode(ConductorMessage.of(inf))).isInstanceOf(IllegalArgumentException.class);
        // free-form values are checked when the body is built
        assertThatThrownBy(() -> new NewRequestConductor("r", Map.of(), List.of(), List.of(), Map.of(),
                Map.of("scale", Double.POSITIVE_INFINITY))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void freeFormValuesAreNormalizedSoTheyCompareEqualAfterARoundTrip() {
        NewRequestConductor built = new NewRequestConductor("r", Map.of(), List.of(), List.of(),
                Map.of("image", List.of(Map.of("width", 1024))), Map.of("steps", 30, "scale", 7.5f, "list", List.of(1, "a")));
        ConductorMessage decoded = codec.decodeConductorMessage(codec.encode(ConductorMessage.of(built)));
        assertThat(decoded.body()).isEqualTo(built);
        assertThat(built.modelKwargs().get("steps")).isEqualTo(30L);
        assertThatThrownBy(() -> new NewRequestConductor("r", Map.of(), List.of(), List.of(), Map.of(),
                Map.of("when", new Object()))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void collectionsOfABodyAreImmutableCopies() {
        java.util.ArrayList<Long> failed = new java.util.ArrayList<>(List.of(1L));
        TensorReceived t = new TensorReceived("r", new java.util.HashMap<>(Map.of(2L, 1)), failed);
        failed.add(3L);
        assertThat(t.failedTensorIds()).containsExactly(1L);
        assertThatThrownBy(() -> t.successfulTensors().put(9L, 9)).isInstanceOf(UnsupportedOperationException.class);
    }
}
