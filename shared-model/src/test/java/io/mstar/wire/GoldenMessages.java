package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.NodeAndGraphWalk;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.profile.GraphTiming;
import io.mstar.profile.RxInfo;
import io.mstar.profile.TxInfo;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.PublishedInfo;
import io.mstar.request.PublishedSequence;
import io.mstar.request.SamplingConfig;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One realistic message per type, every field away from its default: the Java side of the golden
 * files. Built by hand (not by the codec) so a golden test compares two independent sources.
 */
final class GoldenMessages {

    private GoldenMessages() {
    }

    static TensorPointerInfo tensor(long uuid, String node) {
        return new TensorPointerInfo(uuid, List.of(1L, 4096L), List.of(4096L, 1L), "bfloat16", 8192L,
                140_230_465_536L, 4096L, "worker-1.mstar.svc:7301", "worker-1", 2, 1,
                "mstar-arena-1", 1_048_576L, node, "prefill");
    }

    static TensorPointerInfo smallTensor(long uuid) {
        return new TensorPointerInfo(uuid, List.of(1L, 2L), List.of(2L, 1L), "bfloat16", 4L,
                140_230_465_536L, 4096L, "worker-1.mstar.svc:7301", "worker-1", 2, 1,
                "mstar-arena-1", 1_048_576L, "llm", "decode");
    }

    static NestedLoopIndices loopIndices() {
        return new NestedLoopIndices(List.of("decode_loop", "codec_loop"),
                Map.of("decode_loop", 17, "codec_loop", 3), 42);
    }

    static PublishedInfo kvInfo() {
        return new PublishedInfo("kv_cache", 2, List.of(
                new PublishedSequence(0, "llm", 129, List.of(7, 8, 9)),
                new PublishedSequence(1, "llm", 129, List.of(11, 12, 13))));
    }

    static CurrentForwardPassInfo requestInfo() {
        SamplingConfig main = new SamplingConfig(151_936, 0.7, 50, 0.9, true, 1.1, 1234L);
        SamplingConfig aux = new SamplingConfig(4096, 1.0, 20, 0.95, true, 1.05, 99L);
        return new CurrentForwardPassInfo("req-7f3a", "decode", true, 12, 987_654_321_012L, 2048,
                Map.of("llm", new MultiSamplingConfig(main, Map.of("codebook_1", aux))),
                Map.of("image_size", "1024x1024", "phase", "warm"),
                Map.of("kv_cache", kvInfo()),
                "speech",
                Map.of("decode_loop", loopIndices()),
                Map.of("codec_loop", 6));
    }

    static GraphEdge edge() {
        return new GraphEdge("audio_decoder", "hidden_states",
                List.of(tensor(-9_000_000_000_000_000_001L, "llm"), tensor(72_057_594_037_927_937L, "llm")),
                true, true, true, "codec", "audio", true, true, 2, 1);
    }

    static Map<WorkerMessageType, WorkerMessage> worker() {
        Map<WorkerMessageType, WorkerMessage> m = new EnumMap<>(WorkerMessageType.class);
        byte[] id = new byte[CollectiveBootstrap.NCCL_UNIQUE_ID_BYTES];
        for (int i = 0; i < id.length; i++) {
            id[i] = (byte) (i * 37 + 5);
        }
        put(m, CollectiveBootstrap.of("mstar.toy-tts.g1.i0", 3, id));
        put(m, new ConductorHeartbeat(2000));
        put(m, new DrainRequest("req-7f3a", MessageSource.TP_RANK_0, RequestOutcome.ABORTED));
        put(m, new InputSignals("req-7f3a", List.of(edge()), requestInfo(), "speech",
                Set.of("llm", "vision")));
        put(m, new NewRequest("req-7f3a", List.of(3, 4),
                Map.of(3, List.of("worker-0", "worker-1"), 4, List.of("worker-2")),
                List.of(edge()), requestInfo()));
        put(m, new RemoveRequest("req-7f3a", MessageSource.SELF, 17));
        OffloadDelta delta = OffloadDelta.newDelta();
        delta.addOffloaded("req-1");
        delta.addReloaded("req-2");
        delta.addOffloaded("req-3");
        put(m, new ScheduleTPNode("llm", "decode", List.of("req-2", "req-1", "req-9"), true, 31, 30, delta));
        put(m, new StopLoops("req-7f3a", Set.of("decode_loop", "codec_loop"), "speech",
                Map.of("decode_loop", loopIndices())));
        put(m, new TensorReceived("req-7f3a",
                Map.of(123L, 2, 9_223_372_036_854_775_807L, 1), List.of(-5L, 456L)));
        put(m, new TPNoSpeculation("llm", "decode", 30));
        put(m, new UnpersistTensors("req-7f3a", Map.of(77L, 3, -9_223_372_036_854_775_808L, 1)));
        return m;
    }

    static Map<ConductorMessageType, ConductorMessage> conductor() {
        Map<ConductorMessageType, ConductorMessage> m = new EnumMap<>(ConductorMessageType.class);
        put(m, new AbortRequest("req-7f3a"));
        put(m, new FailRequests(Map.of("req-1", "CUDA out of memory in prepare_inputs",
                "req-2", "postprocess: invalid UTF-8 in detokenized output"),
                Map.of("req-1", WorkerErrorType.DEVICE_ERROR)));
        Map<String, Object> kwargs = new LinkedHashMap<>();
        kwargs.put("guidance_scale", 7.5);
        kwargs.put("num_steps", 30L);
        kwargs.put("negative_prompt", null);
        kwargs.put("voice", Map.of("name", "alloy", "speed", 1.25));
        kwargs.put("stop", List.of("</s>", "<|eot|>"));
        kwargs.put("stream", true);
        put(m, new NewRequestConductor("req-7f3a",
                Map.of("text_tokens", List.of(tensor(555L, null)), "image", List.of(tensor(556L, null))),
                List.of("text", "image"), List.of("text", "audio"),
                Map.of("image", List.of(Map.of("width", 1024L, "height", 768L, "format", "png"))),
                kwargs));
        put(m, new ReadsDone("req-7f3a", "worker-3"));
        // Token-sized tensors, so their bytes travel inline (two bfloat16 values each).
        GraphEdge small = edge().toBuilder().tensorInfo(List.of(
                smallTensor(-9_000_000_000_000_000_001L), smallTensor(72_057_594_037_927_937L))).build();
        put(m, new ResultTensors("req-7f3a", "audio", small, loopIndices(),
                Map.of("sample_rate", "24000", "format", "pcm_s16le"), List.of("AACAPw==", "AAAAwA==")));
        put(m, new SetupDone("worker-3"));
        Map<NodeAndGraphWalk, GraphTiming> timings = new LinkedHashMap<>();
        GraphTiming t1 = new GraphTiming("llm", "decode", 128, 1.5, 1.25, 0.125, 0.0625);
        GraphTiming t2 = new GraphTiming("llm", "prefill", 1, 0.25, 0.2, 0.03, 0.01);
        GraphTiming t3 = new GraphTiming("audio_decoder", "codec_chunk", 16, 0.5, 0.4, 0.05, 0.025);
        timings.put(t1.key(), t1);
        timings.put(t2.key(), t2);
        timings.put(t3.key(), t3);
        put(m, new WorkerGraphsDone("req-7f3a", List.of(3, 5), true,
                Map.of("hidden_states", List.of(tensor(901L, "llm"), tensor(902L, "llm"))),
                Map.of("text_tokens", 128),
                List.of("text_tokens", "audio_codes"),
                Map.of("kv_cache", kvInfo()),
                "speech", true,
                Map.of("audio_codes", 96),
                Map.of("text_tokens", loopIndices()),
                timings,
                List.of(new RxInfo("hidden_states", "worker-1", "worker-3", 4, 65_536, 0.0125)),
                List.of(new TxInfo("audio_codes", "worker-3", 2, 1024, 0.001))));
        return m;
    }

    private static void put(Map<WorkerMessageType, WorkerMessage> m, WorkerMessageBody body) {
        WorkerMessage msg = WorkerMessage.of(body);
        m.put(msg.messageType(), msg);
    }

    private static void put(Map<ConductorMessageType, ConductorMessage> m, ConductorMessageBody body) {
        ConductorMessage msg = ConductorMessage.of(body);
        m.put(msg.messageType(), msg);
    }
}
