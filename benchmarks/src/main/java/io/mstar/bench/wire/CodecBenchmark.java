package io.mstar.bench.wire;

import io.mstar.graph.NodeAndGraphWalk;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.profile.GraphTiming;
import io.mstar.profile.RxInfo;
import io.mstar.profile.TxInfo;
import io.mstar.request.PublishedInfo;
import io.mstar.request.PublishedSequence;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.OffloadDelta;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The wire codec on the two messages that matter for throughput: the conductor's per-pass
 * {@code WorkerGraphsDone} and the TP leader's per-batch {@code ScheduleTPNode}. The baseline in
 * the same run is plain Jackson on the same bytes: {@code readTree} (a parse that builds a
 * {@link JsonNode} tree, no validation) and writing that tree back. Report typed/tree ratios,
 * not absolute times.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class CodecBenchmark {

    private final WireCodec codec = new WireCodec();
    private final ObjectMapper mapper = JsonMapper.builder().build();

    private ConductorMessage graphsDone;
    private byte[] graphsDoneJson;
    private JsonNode graphsDoneTree;

    private WorkerMessage scheduleTp;
    private byte[] scheduleTpJson;
    private JsonNode scheduleTpTree;

    @Setup
    public void setup() {
        graphsDone = ConductorMessage.of(workerGraphsDone());
        graphsDoneJson = codec.encode(graphsDone);
        graphsDoneTree = mapper.readTree(graphsDoneJson);
        scheduleTp = WorkerMessage.of(scheduleTpNode());
        scheduleTpJson = codec.encode(scheduleTp);
        scheduleTpTree = mapper.readTree(scheduleTpJson);
    }

    @Benchmark
    public ConductorMessage graphsDoneDecodeTyped() {
        return codec.decodeConductorMessage(graphsDoneJson);
    }

    @Benchmark
    public JsonNode graphsDoneParseTreeBaseline() {
        return mapper.readTree(graphsDoneJson);
    }

    @Benchmark
    public byte[] graphsDoneEncodeTyped() {
        return codec.encode(graphsDone);
    }

    @Benchmark
    public byte[] graphsDoneWriteTreeBaseline() {
        return mapper.writeValueAsBytes(graphsDoneTree);
    }

    @Benchmark
    public WorkerMessage scheduleTpDecodeTyped() {
        return codec.decodeWorkerMessage(scheduleTpJson);
    }

    @Benchmark
    public JsonNode scheduleTpParseTreeBaseline() {
        return mapper.readTree(scheduleTpJson);
    }

    @Benchmark
    public byte[] scheduleTpEncodeTyped() {
        return codec.encode(scheduleTp);
    }

    @Benchmark
    public byte[] scheduleTpWriteTreeBaseline() {
        return mapper.writeValueAsBytes(scheduleTpTree);
    }

    /** 8 persisted signals with descriptors, 4 graph timings, rx/tx lists, a KV publication. */
    static WorkerGraphsDone workerGraphsDone() {
        Map<String, List<TensorPointerInfo>> persist = new LinkedHashMap<>();
        long uuid = 0x0300_0001_0000_0000L;
        for (int s = 0; s < 8; s++) {
            List<TensorPointerInfo> tensors = new ArrayList<>();
            for (int t = 0; t < 1 + s % 2; t++) {
                tensors.add(new TensorPointerInfo(uuid++, List.of(1L, 512L + s, 4096L), List.of(2_101_248L, 4096L, 1L),
                        "bfloat16", 2L * (512 + s) * 4096, 0x7f3a_0000_0000L + 65_536L * s, 0, "worker-3.mstar:7301",
                        "worker-3", 2, 0, "mstar-arena-3", 8_388_608L * s, "llm", "decode"));
            }
            persist.put("signal_" + s, tensors);
        }
        Map<NodeAndGraphWalk, GraphTiming> timings = new LinkedHashMap<>();
        String[][] nodes = {{"vision_encoder", "prefill"}, {"llm", "prefill"}, {"llm", "decode"}, {"audio_decoder", "codec_chunk"}};
        for (String[] n : nodes) {
            GraphTiming t = new GraphTiming(n[0], n[1], 128, 1.53125, 1.25, 0.125, 0.0625);
            timings.put(t.key(), t);
        }
        List<RxInfo> rx = new ArrayList<>();
        List<TxInfo> tx = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            rx.add(new RxInfo("hidden_" + i, "worker-" + i, "worker-3", 16 + i, 1_048_576L * i, 0.0125 * i));
            tx.add(new TxInfo("codes_" + i, "worker-3", 8 + i, 4096L * i, 0.001 * i));
        }
        PublishedInfo kv = new PublishedInfo("kv_cache", 2, List.of(
                new PublishedSequence(0, "llm", 640, List.of(11, 12, 13, 14, 15, 16, 17, 18, 19, 20)),
                new PublishedSequence(1, "llm", 640, List.of(21, 22, 23, 24, 25, 26, 27, 28, 29, 30))));
        NestedLoopIndices loop = new NestedLoopIndices(List.of("decode_loop"), Map.of("decode_loop", 127), 131);
        return new WorkerGraphsDone("req-0b9e4c2a-7f3a-4c1e-9d2b-5a6f7e8d9c0b", List.of(3, 4), true, persist,
                Map.of("text_tokens", 1, "audio_codes", 8), List.of("text_tokens", "audio_codes"), Map.of("kv_cache", kv),
                "default", false, Map.of("audio_codes", 96), Map.of("text_tokens", loop), timings, rx, tx);
    }

    /** A batch of 16 requests carrying 64 offload/reload moves. */
    static ScheduleTPNode scheduleTpNode() {
        OffloadDelta delta = OffloadDelta.newDelta();
        for (int i = 0; i < 64; i++) {
            if (i % 3 == 0) {
                delta.addReloaded("req-" + (1000 + i));
            } else {
                delta.addOffloaded("req-" + (1000 + i));
            }
        }
        List<String> batch = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            batch.add("req-" + (2000 + i));
        }
        return new ScheduleTPNode("llm", "decode", batch, true, 4_711, 4_710, delta);
    }
}
