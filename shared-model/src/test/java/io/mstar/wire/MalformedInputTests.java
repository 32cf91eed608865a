package io.mstar.wire;

import io.mstar.wire.WireFormatException.Reason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Every way a document can be wrong is a {@link WireFormatException} with a stable reason and
 * the JSON path of the offending value — and nothing else escapes the decoders.
 */
class MalformedInputTests {

    private final WireCodec codec = new WireCodec();

    private static final String TPI = "{\"uuid\": 5, \"dims\": [1], \"stride\": [1], \"dtype\": \"f32\", \"nbytes\": 4,"
            + " \"address\": 0, \"source_session_id\": \"h:1\", \"source_entity\": \"worker-0\"}";
    private static final String INFO = "{\"request_id\": \"r\", \"graph_walk\": \"decode\", \"requires_cfg\": false,"
            + " \"fwd_index\": 0, \"random_seed\": 1, \"max_tokens\": 16}";

    private WireFormatException workerFailure(String json) {
        return failure(json.getBytes(StandardCharsets.UTF_8), true);
    }

    private WireFormatException conductorFailure(String json) {
        return failure(json.getBytes(StandardCharsets.UTF_8), false);
    }

    private WireFormatException failure(byte[] json, boolean worker) {
        Throwable t = catchThrowable(() -> {
            if (worker) {
                codec.decodeWorkerMessage(json);
            } else {
                codec.decodeConductorMessage(json);
            }
        });
        assertThat(t).isExactlyInstanceOf(WireFormatException.class);
        return (WireFormatException) t;
    }

    private static void assertFailure(WireFormatException e, Reason reason, String path) {
        assertThat(e.reason()).as("reason of %s", e.getMessage()).isEqualTo(reason);
        assertThat(e.jsonPath()).as("path of %s", e.getMessage()).isEqualTo(path);
    }

    @Test
    void malformedJsonIsMalformed() {
        assertFailure(workerFailure("{\"message_type\": \"drain_request\", \"body\": {\"request_id\": }}"),
                Reason.MALFORMED_JSON, "$.body.request_id");
    }

    @Test
    void emptyInputIsMalformed() {
        assertFailure(failure(new byte[0], true), Reason.MALFORMED_JSON, "$");
        assertFailure(failure(null, false), Reason.MALFORMED_JSON, "$");
        assertFailure(workerFailure("   \n "), Reason.MALFORMED_JSON, "$");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"[]", "\"drain_request\"", "42", "null", "true"})
    void aRootThatIsNotAnObjectIsTheWrongType(String json) {
        assertFailure(workerFailure(json), Reason.WRONG_TYPE, "$");
    }

    @Test
    void anUnknownMessageTypeIsReportedAsSuch() {
        assertFailure(workerFailure("{\"message_type\": \"teleport\", \"body\": {}}"),
                Reason.UNKNOWN_MESSAGE_TYPE, "$.message_type");
        // a conductor type is not a worker type, and vice versa
        assertFailure(workerFailure("{\"message_type\": \"setup_done\", \"body\": {\"worker_id\": \"w\"}}"),
                Reason.UNKNOWN_MESSAGE_TYPE, "$.message_type");
        assertFailure(conductorFailure("{\"message_type\": \"unpersist\", \"body\": {}}"),
                Reason.UNKNOWN_MESSAGE_TYPE, "$.message_type");
    }

    @Test
    void aMissingMessageTypeIsAMissingField() {
        assertFailure(workerFailure("{\"body\": {\"request_id\": \"r\"}}"), Reason.MISSING_FIELD, "$.message_type");
        assertFailure(workerFailure("{\"message_type\": null, \"body\": {\"request_id\": \"r\"}}"),
                Reason.MISSING_FIELD, "$.message_type");
    }

    @Test
    void aMissingBodyIsAMissingField() {
        assertFailure(workerFailure("{\"message_type\": \"drain_request\"}"), Reason.MISSING_FIELD, "$.body");
        assertFailure(workerFailure("{\"message_type\": \"drain_request\", \"body\": null}"),
                Reason.MISSING_FIELD, "$.body");
    }

    @Test
    void aMissingRequiredFieldDeepInsideNamesItsFullPath() {
        String edge0 = "{\"next_node\": \"llm\", \"name\": \"a\", \"tensor_info\": [" + TPI + "]}";
        String tpiWithoutUuid = TPI.replace("\"uuid\": 5, ", "");
        String edge1 = "{\"next_node\": \"llm\", \"name\": \"b\", \"tensor_info\": [" + TPI + ", " + tpiWithoutUuid + "]}";
        String json = "{\"message_type\": \"input_signals\", \"body\": {\"request_id\": \"r\", \"inputs\": ["
                + edge0 + ", " + edge1 + "], \"request_info\": " + INFO + "}}";
        assertFailure(workerFailure(json), Reason.MISSING_FIELD, "$.body.inputs[1].tensor_info[1].uuid");
    }

    @Test
    void anExplicitNullForARequiredFieldIsAMissingField() {
        assertFailure(workerFailure("{\"message_type\": \"tp_no_spec\", \"body\": {\"node_name\": \"llm\","
                + " \"graph_walk\": \"decode\", \"spec_from_seq\": null}}"), Reason.MISSING_FIELD, "$.body.spec_from_seq");
    }

    @Test
    void aStringWhereAnIntegerBelongsIsTheWrongType() {
        assertFailure(workerFailure("{\"message_type\": \"tp_no_spec\", \"body\": {\"node_name\": \"llm\","
                + " \"graph_walk\": \"decode\", \"spec_from_seq\": \"1\"}}"), Reason.WRONG_TYPE, "$.body.spec_from_seq");
    }

    @Test
    void aFloatWhereAnIntegerBelongsIsTheWrongType() {
        assertFailure(workerFailure("{\"message_type\": \"unpersist\", \"body\": {\"request_id\": \"r\","
                + " \"uuid_to_ref_count\": [[1, 2], [3, 1.5]]}}"), Reason.WRONG_TYPE, "$.body.uuid_to_ref_count[1][1]");
        assertFailure(workerFailure("{\"message_type\": \"tp_no_spec\", \"body\": {\"node_name\": \"llm\","
                + " \"graph_walk\": \"decode\", \"spec_from_seq\": 1.0}}"), Reason.WRONG_TYPE, "$.body.spec_from_seq");
    }

    @Test
    void anIntegerWhereAStringOrBooleanBelongsIsTheWrongType() {
        assertFailure(workerFailure("{\"message_type\": \"drain_request\", \"body\": {\"request_id\": 1}}"),
                Reason.WRONG_TYPE, "$.body.request_id");
        assertFailure(workerFailure("{\"message_type\": \"schedule_tp\", \"body\": {\"node_name\": \"llm\","
                + " \"graph_walk\": \"decode\", \"request_ids\": [], \"speculative\": 1}}"),
                Reason.WRONG_TYPE, "$.body.speculative");
    }

    @Test
    void anObjectWhereAnArrayBelongsIsTheWrongType() {
        assertFailure(workerFailure("{\"message_type\": \"tensor_received\", \"body\": {\"request_id\": \"r\","
                + " \"successful_tensors\": {\"1\": 2}, \"failed_tensor_ids\": []}}"),
                Reason.WRONG_TYPE, "$.body.successful_tensors");
    }

    @Test
    void anArrayWhereAnObjectBelongsIsTheWrongType() {
        assertFailure(conductorFailure("{\"message_type\": \"fail_requests\", \"body\": {\"errors\": [\"r\"]}}"),
                Reason.WRONG_TYPE, "$.body.errors");
        assertFailure(workerFailure("{\"message_type\": \"drain_request\", \"body\": [\"r\"]}"),
                Reason.WRONG_TYPE, "$.body");
    }

    @Test
    void aNullListElementIsTheWrongType() {
        assertFailure(workerFailure("{\"message_type\": \"tensor_received\", \"body\": {\"request_id\": \"r\","
                + " \"successful_tensors\": [], \"failed_tensor_ids\": [1, null]}}"),
                Reason.WRONG_TYPE, "$.body.failed_tensor_ids[1]");
    }

    @Test
    void anUnknownMessageSourceCodeIsAnInvalidValue() {
        assertFailure(workerFailure("{\"message_type\": \"remove_request\", \"body\": {\"request_id\": \"r\", \"source\": 3}}"),
                Reason.INVALID_VALUE, "$.body.source");
        assertFailure(workerFailure("{\"message_type\": \"drain_request\", \"body\": {\"request_id\": \"r\", \"source\": \"conductor\"}}"),
                Reason.WRONG_TYPE, "$.body.source");
    }

    @Test
    void integersOutOfRangeAreInvalidValues() {
        assertFailure(workerFailure("{\"message_type\": \"tp_no_spec\", \"body\": {\"node_name\": \"llm\","
                + " \"graph_walk\": \"decode\", \"spec_from_seq\": 9223372036854775808}}"), Reason.INVALID_VALUE,
                "$.body.spec_from_seq");
        assertFailure(workerFailure("{\"message_type\": \"tensor_received\", \"body\": {\"request_id\": \"r\","
                + " \"successful_tensors\": [], \"failed_tensor_ids\": [9223372036854775808]}}"),
                Reason.INVALID_VALUE, "$.body.failed_tensor_ids[0]");
    }

    @Test
    void aDoubleOutOfRangeIsAnInvalidValue() {
        String timing = "{\"node\": \"n\", \"graph_walk\": \"w\", \"exec_count\": 1, \"total_time\": 1e999,"
                + " \"forward_time\": 0, \"preprocess_time\": 0, \"postprocess_time\": 0}";
        assertFailure(conductorFailure("{\"message_type\": \"worker_graphs_done\", \"body\": {\"request_id\": \"r\","
                + " \"worker_graph_ids\": [], \"is_first_tp_rank\": true, \"graph_timings\": [" + timing + "]}}"),
                Reason.INVALID_VALUE, "$.body.graph_timings[0].total_time");
    }

    @Test
    void offloadDeltaArraysOfDifferentLengthsAreAnInvalidValue() {
        assertFailure(workerFailure("{\"message_type\": \"schedule_tp\", \"body\": {\"node_name\": \"llm\","
                + " \"graph_walk\": \"decode\", \"request_ids\": [\"a\"], \"resident_delta\":"
                + " {\"rids\": [\"a\", \"b\"], \"is_offload\": [true]}}}"), Reason.INVALID_VALUE, "$.body.resident_delta");
    }

    @Test
    void inlineDataForAnotherNumberOfTensorsIsAnInvalidValue() {
        assertFailure(conductorFailure("{\"message_type\": \"result_tensors\", \"body\": {\"request_id\": \"r\","
                + " \"modality\": \"text\", \"graph_edge\": {\"next_node\": \"emit_to_client\", \"name\": \"token\","
                + " \"tensor_info\": []}, \"loop_indices\": {\"loop_name_order\": [], \"loop_indices\": {},"
                + " \"wg_fwd_pass_idx\": 0}, \"inline_data\": [\"AAAAAA==\"]}}"), Reason.INVALID_VALUE, "$.body");
    }

    @Test
    void newRequestInlineDataForAnotherNumberOfTensorsIsAnInvalidValue() {
        assertFailure(workerFailure("{\"message_type\": \"new_request\", \"body\": {\"request_id\": \"r\","
                + " \"partition_worker_graph_ids\": [0], \"worker_graph_to_workers\": [], \"initial_inputs\": [],"
                + " \"request_info\": " + INFO + ", \"inline_data\": [\"AAAAAA==\"]}}"), Reason.INVALID_VALUE, "$.body");
    }

    @Test
    void inputSignalsInlineDataForAnotherNumberOfTensorsIsAnInvalidValue() {
        assertFailure(workerFailure("{\"message_type\": \"input_signals\", \"body\": {\"request_id\": \"r\","
                + " \"inputs\": [], \"request_info\": " + INFO + ", \"inline_data\": [\"AAAAAA==\"]}}"),
                Reason.INVALID_VALUE, "$.body");
    }

    @Test
    void anNcclUniqueIdThatIsNotBase64Of128BytesIsAnInvalidValue() {
        WireFormatException shortId = workerFailure("{\"message_type\": \"collective_bootstrap\", \"body\": {"
                + "\"collective\": \"c\", \"generation\": 1, \"nccl_unique_id\": \"AAAAAA==\"}}");
        assertFailure(shortId, Reason.INVALID_VALUE, "$.body");
        assertThat(shortId.getMessage()).contains("nccl_unique_id holds 4 bytes, not 128");
        assertFailure(workerFailure("{\"message_type\": \"collective_bootstrap\", \"body\": {"
                + "\"collective\": \"c\", \"generation\": 1, \"nccl_unique_id\": \"not base64!\"}}"),
                Reason.INVALID_VALUE, "$.body");
    }

    @Test
    void aMalformedPairIsAnInvalidValue() {
        assertFailure(workerFailure("{\"message_type\": \"unpersist\", \"body\": {\"request_id\": \"r\","
                + " \"uuid_to_ref_count\": [[1, 2, 3]]}}"), Reason.INVALID_VALUE, "$.body.uuid_to_ref_count[0]");
        assertFailure(workerFailure("{\"message_type\": \"unpersist\", \"body\": {\"request_id\": \"r\","
                + " \"uuid_to_ref_count\": [[1]]}}"), Reason.INVALID_VALUE, "$.body.uuid_to_ref_count[0]");
        assertFailure(workerFailure("{\"message_type\": \"unpersist\", \"body\": {\"request_id\": \"r\","
                + " \"uuid_to_ref_count\": [[1, 2], [1, 3]]}}"), Reason.INVALID_VALUE, "$.body.uuid_to_ref_count[1]");
    }

    @Test
    void trailingGarbageAfterTheDocumentIsTrailingData() {
        String ok = "{\"message_type\": \"abort_request\", \"body\": {\"request_id\": \"r\"}}";
        assertFailure(conductorFailure(ok + " x"), Reason.TRAILING_DATA, "$");
        assertFailure(conductorFailure(ok + "}"), Reason.TRAILING_DATA, "$");
        assertFailure(conductorFailure(ok + ok), Reason.TRAILING_DATA, "$");
        assertThat(codec.decodeConductorMessage((ok + " \n\t ").getBytes(StandardCharsets.UTF_8)).body())
                .isEqualTo(new AbortRequest("r"));
    }

    @Test
    void nestingDeeperThanTheLimitIsTooDeep() {
        // envelope, body and model_kwargs are three levels: this is exactly one level too many
        int depth = WireCodec.MAX_NESTING_DEPTH - 2;
        String deep = "[".repeat(depth) + "]".repeat(depth);
        WireFormatException e = conductorFailure("{\"message_type\": \"new_request\", \"body\": {\"model_kwargs\": {\"x\": "
                + deep + "}}}");
        assertThat(e.reason()).isEqualTo(Reason.TOO_DEEP);
        assertThat(e.jsonPath()).startsWith("$.body.model_kwargs.x[0]");
        // also when the deep value is an unknown field that is only skipped (envelope and body
        // are two levels)
        String skipped = "[".repeat(depth + 1) + "]".repeat(depth + 1);
        assertThat(workerFailure("{\"message_type\": \"drain_request\", \"body\": {\"request_id\": \"r\", \"future\": "
                + skipped + "}}").reason()).isEqualTo(Reason.TOO_DEEP);
    }

    @Test
    void nestingUpToTheLimitIsAccepted() {
        int depth = WireCodec.MAX_NESTING_DEPTH - 3; // envelope, body, model_kwargs: exactly the limit
        String deep = "[".repeat(depth) + "]".repeat(depth);
        String json = "{\"message_type\": \"new_request\", \"body\": {\"request_id\": \"r\", \"initial_signals\": {},"
                + " \"initial_input_modalities\": [], \"initial_output_modalities\": [], \"input_metadata\": {},"
                + " \"model_kwargs\": {\"x\": " + deep + "}}}";
        assertThat(codec.decodeConductorMessage(json.getBytes(StandardCharsets.UTF_8)).body())
                .isInstanceOf(NewRequestConductor.class);
    }

    @Test
    void aDocumentOverTheSizeLimitIsTooLarge() {
        byte[] big = new byte[WireCodec.MAX_DOCUMENT_BYTES + 1];
        java.util.Arrays.fill(big, (byte) ' ');
        assertFailure(failure(big, true), Reason.TOO_LARGE, "$");
    }

    @Test
    void aStringOverTheLengthLimitIsTooLarge() {
        String longString = "a".repeat(WireCodec.MAX_STRING_LENGTH + 1);
        WireFormatException e = workerFailure("{\"message_type\": \"drain_request\", \"body\": {\"request_id\": \""
                + longString + "\"}}");
        assertThat(e.reason()).isEqualTo(Reason.TOO_LARGE);
        assertThat(e.jsonPath()).isEqualTo("$.body.request_id");
    }

    @Test
    void aDuplicateGraphTimingKeyIsAnInvalidValue() {
        String timing = "{\"node\": \"llm\", \"graph_walk\": \"decode\", \"exec_count\": 1, \"total_time\": 1.0,"
                + " \"forward_time\": 0.5, \"preprocess_time\": 0.25, \"postprocess_time\": 0.125}";
        assertFailure(conductorFailure("{\"message_type\": \"worker_graphs_done\", \"body\": {\"request_id\": \"r\","
                + " \"worker_graph_ids\": [1], \"is_first_tp_rank\": true, \"graph_timings\": [" + timing + ", "
                + timing.replace("1.0", "2.0") + "]}}"), Reason.INVALID_VALUE, "$.body.graph_timings[1]");
    }

    @Test
    void aDuplicateObjectKeyIsMalformed() {
        assertThat(conductorFailure("{\"message_type\": \"abort_request\", \"body\": {\"request_id\": \"a\","
                + " \"request_id\": \"b\"}}").reason()).isEqualTo(Reason.MALFORMED_JSON);
    }

    @Test
    void aValueTheRecordRejectsIsAnInvalidValue() {
        String seq = "{\"rank\": 0, \"label\": \"llm\", \"seq_len\": 3, \"page_indices\": [1]}";
        String info = INFO.replace("}", ", \"resource_publish_info\": {\"kv\": {\"resource_type\": \"kv_cache\","
                + " \"sequences\": [" + seq + ", " + seq + "]}}}");
        assertFailure(workerFailure("{\"message_type\": \"new_request\", \"body\": {\"request_id\": \"r\","
                + " \"partition_worker_graph_ids\": [], \"worker_graph_to_workers\": [], \"initial_inputs\": [],"
                + " \"request_info\": " + info + "}}"), Reason.INVALID_VALUE, "$.body.request_info.resource_publish_info.kv");
    }

    @Test
    void invalidUtf8IsMalformed() {
        byte[] json = "{\"message_type\": \"abort_request\", \"body\": {\"request_id\": \"XX\"}}"
                .getBytes(StandardCharsets.UTF_8);
        int at = new String(json, StandardCharsets.UTF_8).indexOf("XX");
        json[at] = (byte) 0xC3;
        json[at + 1] = (byte) 0x28;
        assertThat(failure(json, false).reason()).isEqualTo(Reason.MALFORMED_JSON);
    }

    @Test
    void pathsQuoteKeysThatAreNotIdentifiers() {
        assertFailure(conductorFailure("{\"message_type\": \"fail_requests\", \"body\": {\"errors\": {\"req 1\": 5}}}"),
                Reason.WRONG_TYPE, "$.body.errors['req 1']");
    }
}
