package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.profile.RxInfo;
import io.mstar.profile.TxInfo;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.PublishedInfo;
import io.mstar.request.SamplingConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A document holding only the required fields decodes to the spec's defaults. */
class DefaultsTests {

    private static final String TPI = "{\"uuid\": 5, \"dims\": [2], \"stride\": [1], \"dtype\": \"f32\", \"nbytes\": 8,"
            + " \"address\": 64, \"source_session_id\": \"h:1\", \"source_entity\": \"worker-0\"}";
    private static final String EDGE = "{\"next_node\": \"llm\", \"name\": \"x\", \"tensor_info\": [" + TPI + "]}";
    private static final String INFO = "{\"request_id\": \"r\", \"graph_walk\": \"decode\", \"requires_cfg\": true,"
            + " \"fwd_index\": 3, \"random_seed\": 7, \"max_tokens\": 16,"
            + " \"sampling_config\": {\"llm\": {}, \"vision\": {\"main\": {}}},"
            + " \"resource_publish_info\": {\"kv\": {\"resource_type\": \"kv_cache\"}}}";

    private final WireCodec codec = new WireCodec();

    private WorkerMessageBody worker(String type, String body) {
        return codec.decodeWorkerMessage(("{\"message_type\": \"" + type + "\", \"body\": " + body + "}")
                .getBytes(StandardCharsets.UTF_8)).body();
    }

    private ConductorMessageBody conductor(String type, String body) {
        return codec.decodeConductorMessage(("{\"message_type\": \"" + type + "\", \"body\": " + body + "}")
                .getBytes(StandardCharsets.UTF_8)).body();
    }

    @Test
    void drainAndRemoveDefaultToTheConductorAndNoTpBatch() {
        assertThat(worker("drain_request", "{\"request_id\": \"r\"}"))
                .isEqualTo(new DrainRequest("r", MessageSource.CONDUCTOR));
        RemoveRequest remove = (RemoveRequest) worker("remove_request", "{\"request_id\": \"r\"}");
        assertThat(remove.source()).isEqualTo(MessageSource.CONDUCTOR);
        assertThat(remove.afterTpSeq()).isEqualTo(-1);
    }

    @Test
    void scheduleTpNodeDefaultsToANonSpeculativeBatchWithNoMoves() {
        ScheduleTPNode s = (ScheduleTPNode) worker("schedule_tp",
                "{\"node_name\": \"llm\", \"graph_walk\": \"decode\", \"request_ids\": [\"a\"]}");
        assertThat(s.speculative()).isFalse();
        assertThat(s.specSeq()).isEqualTo(-1);
        assertThat(s.specFromSeq()).isEqualTo(-1);
        assertThat(s.residentDelta().isEmpty()).isTrue();
    }

    @Test
    void tpSequenceNumbersPastTwoToTheThirtyOneAreRead() {
        // a busy leader numbers 2^31 broadcasts within weeks: the fields are 64-bit on the wire and in code
        long seq = (1L << 40) + 7;
        ScheduleTPNode s = (ScheduleTPNode) worker("schedule_tp", "{\"node_name\": \"llm\", \"graph_walk\": \"decode\", "
                + "\"request_ids\": [\"a\"], \"spec_seq\": " + seq + ", \"spec_from_seq\": " + (seq - 1) + "}");
        assertThat(s.specSeq()).isEqualTo(seq);
        assertThat(s.specFromSeq()).isEqualTo(seq - 1);
        RemoveRequest remove = (RemoveRequest) worker("remove_request",
                "{\"request_id\": \"r\", \"source\": 1, \"after_tp_seq\": " + seq + "}");
        assertThat(remove.afterTpSeq()).isEqualTo(seq);
        TPNoSpeculation none = (TPNoSpeculation) worker("tp_no_spec",
                "{\"node_name\": \"llm\", \"graph_walk\": \"decode\", \"spec_from_seq\": " + seq + "}");
        assertThat(none.specFromSeq()).isEqualTo(seq);
    }

    @Test
    void anOffloadDeltaWithoutItsArraysIsTheEmptyDelta() {
        ScheduleTPNode empty = (ScheduleTPNode) worker("schedule_tp", "{\"node_name\": \"llm\", \"graph_walk\": \"decode\","
                + " \"request_ids\": [\"a\"], \"resident_delta\": {}}");
        assertThat(empty.residentDelta().isEmpty()).isTrue();
        ScheduleTPNode onlyRids = (ScheduleTPNode) worker("schedule_tp", "{\"node_name\": \"llm\", \"graph_walk\":"
                + " \"decode\", \"request_ids\": [\"a\"], \"resident_delta\": {\"rids\": []}}");
        assertThat(onlyRids.residentDelta()).isEqualTo(OffloadDelta.newDelta());
    }

    @Test
    void stopLoopsDefaultsToNoStopTimes() {
        StopLoops s = (StopLoops) worker("stop_loops",
                "{\"request_id\": \"r\", \"loop_names\": [\"b\", \"a\"], \"partition_name\": \"p\"}");
        assertThat(s.loopStopTimes()).isEmpty();
        assertThat(s.loopNames()).containsExactly("a", "b");
    }

    @Test
    void inputSignalsAndTheirPartsTakeEveryDefault() {
        InputSignals s = (InputSignals) worker("input_signals",
                "{\"request_id\": \"r\", \"inputs\": [" + EDGE + "], \"request_info\": " + INFO + "}");
        assertThat(s.partitionName()).isEqualTo("default");
        assertThat(s.producerDone()).isEmpty();

        GraphEdge e = s.inputs().get(0);
        assertThat(e).isEqualTo(new GraphEdge("llm", "x", e.tensorInfo(), false, false, false, null, "", false, false,
                1, null));
        assertThat(e.tensorInfo()).containsExactly(new TensorPointerInfo(5, List.of(2L), List.of(1L), "f32", 8, 64,
                0, "h:1", "worker-0", 1, 0, null, 0, null, null));

        CurrentForwardPassInfo info = s.requestInfo();
        assertThat(info.partitionName()).isEqualTo("default");
        assertThat(info.stepMetadata()).isEmpty();
        assertThat(info.loopStopTimes()).isEmpty();
        assertThat(info.dynamicLoopIterCounts()).isEmpty();
        assertThat(info.samplingConfig().get("llm")).isEqualTo(new MultiSamplingConfig(SamplingConfig.DEFAULT, null));
        assertThat(info.samplingConfig().get("vision").main())
                .isEqualTo(new SamplingConfig(null, 0.6, 0, 1.0, false, 1.0, 0L));
        assertThat(info.samplingConfig().get("vision").aux()).isEmpty();
        assertThat(info.resourcePublishInfo().get("kv")).isEqualTo(new PublishedInfo("kv_cache", 1, List.of()));
    }

    @Test
    void workerGraphsDoneTakesEveryDefault() {
        WorkerGraphsDone d = (WorkerGraphsDone) conductor("worker_graphs_done",
                "{\"request_id\": \"r\", \"worker_graph_ids\": [1], \"is_first_tp_rank\": false}");
        assertThat(d).isEqualTo(new WorkerGraphsDone("r", List.of(1), false));
        assertThat(d.persistSignals()).isEmpty();
        assertThat(d.newTokenCounts()).isEmpty();
        assertThat(d.outputSignalNames()).isEmpty();
        assertThat(d.resourcePublishInfo()).isEmpty();
        assertThat(d.partitionName()).isEqualTo("default");
        assertThat(d.partitionDone()).isFalse();
        assertThat(d.streamTokensConsumed()).isEmpty();
        assertThat(d.outputLoopIndices()).isEmpty();
        assertThat(d.graphTimings()).isEmpty();
        assertThat(d.rxInfo()).isEmpty();
        assertThat(d.txInfo()).isEmpty();
    }

    @Test
    void transferTotalsDefaultToZero() {
        WorkerGraphsDone d = (WorkerGraphsDone) conductor("worker_graphs_done",
                "{\"request_id\": \"r\", \"worker_graph_ids\": [], \"is_first_tp_rank\": true,"
                        + " \"rx_info\": [{\"edge_name\": \"e\", \"source_entity\": \"a\", \"dest_entity\": \"b\"}],"
                        + " \"tx_info\": [{\"edge_name\": \"e\", \"source_entity\": \"a\"}]}");
        assertThat(d.rxInfo()).containsExactly(new RxInfo("e", "a", "b", 0, 0, 0.0));
        assertThat(d.txInfo()).containsExactly(new TxInfo("e", "a", 0, 0, 0.0));
    }

    @Test
    void anExplicitNullForAnOptionalFieldMeansItsDefault() {
        assertThat(worker("remove_request", "{\"request_id\": \"r\", \"source\": null, \"after_tp_seq\": null}"))
                .isEqualTo(new RemoveRequest("r"));
    }

    @Test
    void nullableFieldsAreOmittedWhenNull() {
        byte[] json = codec.encode(WorkerMessage.of(new InputSignals("r",
                List.of(new GraphEdge("llm", "x", List.of(new TensorPointerInfo(5, List.of(2L), List.of(1L), "f32", 8,
                        64, "h:1", "worker-0")))),
                new CurrentForwardPassInfo("r", "decode", false, 0, 0, 1))));
        String text = new String(json, StandardCharsets.UTF_8);
        assertThat(text).doesNotContain("shm_segment", "source_node_name", "source_graph_walk", "target_partition",
                "shard_dim", "null");
    }

    @Test
    void unknownFieldsAreIgnoredAtEveryLevel() {
        assertThat(conductor("abort_request", "{\"request_id\": \"r\", \"reason\": {\"deep\": [1, {\"x\": null}]}}"))
                .isEqualTo(new AbortRequest("r"));
        assertThat(codec.decodeConductorMessage(("{\"version\": 2, \"message_type\": \"setup_done\", \"trace\": [1],"
                + " \"body\": {\"worker_id\": \"worker-1\", \"capabilities\": [\"gpu\"]}}").getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(ConductorMessage.of(new SetupDone("worker-1")));
    }
}
