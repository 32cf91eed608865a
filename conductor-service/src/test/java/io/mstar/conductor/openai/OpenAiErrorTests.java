package io.mstar.conductor.openai;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import tools.jackson.databind.json.JsonMapper;

class OpenAiErrorTests {

    @Test
    void everyConductorErrorTypeMapsToOpenAiTypeAndCodeWithTheSameStatus() {
        Map<ErrorType, String> types = new java.util.EnumMap<>(ErrorType.class);
        for (ErrorType t : ErrorType.values()) {
            types.put(t, OpenAiError.typeOf(t));
        }
        assertThat(types).containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
                Map.entry(ErrorType.MALFORMED_REQUEST, "invalid_request_error"),
                Map.entry(ErrorType.INVALID_INPUT, "invalid_request_error"),
                Map.entry(ErrorType.PAYLOAD_TOO_LARGE, "invalid_request_error"),
                Map.entry(ErrorType.KV_CAPACITY_EXCEEDED, "invalid_request_error"),
                Map.entry(ErrorType.UNKNOWN_MODEL, "invalid_request_error"),
                Map.entry(ErrorType.REQUEST_NOT_FOUND, "invalid_request_error"),
                Map.entry(ErrorType.DUPLICATE_REQUEST_ID, "invalid_request_error"),
                Map.entry(ErrorType.REQUEST_ABORTED, "invalid_request_error"),
                Map.entry(ErrorType.UNAUTHORIZED, "authentication_error"),
                Map.entry(ErrorType.FORBIDDEN, "permission_error"),
                Map.entry(ErrorType.QUEUE_FULL, "server_error"),
                Map.entry(ErrorType.NO_READY_WORKERS, "server_error"),
                Map.entry(ErrorType.SHUTTING_DOWN, "server_error"),
                Map.entry(ErrorType.WORKER_LOST, "server_error"),
                Map.entry(ErrorType.WORKER_FAILED, "server_error"),
                Map.entry(ErrorType.OUTPUT_READ_FAILED, "server_error"),
                Map.entry(ErrorType.MESSAGE_NOT_DELIVERED, "server_error"),
                Map.entry(ErrorType.MODEL_ERROR, "server_error"),
                Map.entry(ErrorType.DEADLINE_EXCEEDED, "server_error"),
                Map.entry(ErrorType.ADMIN_DISABLED, "server_error"),
                Map.entry(ErrorType.INTERNAL, "server_error")));
        for (ErrorType t : ErrorType.values()) {
            ResponseEntity<OpenAiError> r = OpenAiError.response(new ConductorException(t, "why"));
            assertThat(r.getStatusCode().value()).isEqualTo(t.status());
            assertThat(r.getBody().error().code()).isEqualTo(t == ErrorType.UNKNOWN_MODEL ? "model_not_found" : t.value());
            assertThat(r.getBody().error().message()).isEqualTo("why");
            assertThat(r.getHeaders().getFirst("Retry-After")).isEqualTo(t.status() == 503 ? "1" : null);
        }
    }

    @Test
    void theBodyIsOpenAisShapeWithParamAndCodeAlwaysPresent() {
        JsonMapper json = JsonMapper.builder().build();
        assertThat(json.writeValueAsString(OpenAiError.of(new OpenAiException(ErrorType.INVALID_INPUT, "n", "n must be 1"))))
                .isEqualTo("{\"error\":{\"message\":\"n must be 1\",\"type\":\"invalid_request_error\",\"param\":\"n\","
                        + "\"code\":\"invalid_input\"}}");
        assertThat(json.writeValueAsString(OpenAiError.of(new ConductorException(ErrorType.QUEUE_FULL, "full"))))
                .isEqualTo("{\"error\":{\"message\":\"full\",\"type\":\"server_error\",\"param\":null,"
                        + "\"code\":\"queue_full\"}}");
    }
}
