package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.profile.GraphTiming;
import io.mstar.profile.RxInfo;
import io.mstar.profile.TxInfo;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.MultiSamplingConfig;
import io.mstar.request.PublishedInfo;
import io.mstar.request.PublishedSequence;
import io.mstar.request.SamplingConfig;

import java.util.List;
import java.util.Map;

/**
 * Decoders of the value types that bodies are built from (graph, request and profile types).
 * Each follows {@link WireReader}'s convention and returns null for a JSON null. Absent optional
 * fields take the spec default.
 */
final class ModelDecoding {

    private ModelDecoding() {
    }

    static TensorPointerInfo tensorPointerInfo(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        Long uuid = null;
        List<Long> dims = null;
        List<Long> stride = null;
        String dtype = null;
        Long nbytes = null;
        Long address = null;
        long offset = 0;
        String sourceSessionId = null;
        String sourceEntity = null;
        int sourceTpSize = 1;
        int sourceTpRank = 0;
        String shmSegment = null;
        long shmOffset = 0;
        String sourceNodeName = null;
        String sourceGraphWalk = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "uuid": uuid = r.int64(); break;
                case "dims": dims = r.int64s(); break;
                case "stride": stride = r.int64s(); break;
                case "dtype": dtype = r.string(); break;
                case "nbytes": nbytes = r.int64(); break;
                case "address": address = r.int64(); break;
                case "offset": offset = or(r.int64(), 0L); break;
                case "source_session_id": sourceSessionId = r.string(); break;
                case "source_entity": sourceEntity = r.string(); break;
                case "source_tp_size": sourceTpSize = or(r.int32(), 1); break;
                case "source_tp_rank": sourceTpRank = or(r.int32(), 0); break;
                case "shm_segment": shmSegment = r.string(); break;
                case "shm_offset": shmOffset = or(r.int64(), 0L); break;
                case "source_node_name": sourceNodeName = r.string(); break;
                case "source_graph_walk": sourceGraphWalk = r.string(); break;
                default: r.skip();
            }
        }
        long uuidV = r.required(uuid, "uuid");
        List<Long> dimsV = r.required(dims, "dims");
        List<Long> strideV = r.required(stride, "stride");
        String dtypeV = r.required(dtype, "dtype");
        long nbytesV = r.required(nbytes, "nbytes");
        long addressV = r.required(address, "address");
        String sessionV = r.required(sourceSessionId, "source_session_id");
        String entityV = r.required(sourceEntity, "source_entity");
        long offsetV = offset;
        int tpSize = sourceTpSize;
        int tpRank = sourceTpRank;
        String seg = shmSegment;
        long shmOff = shmOffset;
        String node = sourceNodeName;
        String walk = sourceGraphWalk;
        return r.build(() -> new TensorPointerInfo(uuidV, dimsV, strideV, dtypeV, nbytesV, addressV, offsetV,
                sessionV, entityV, tpSize, tpRank, seg, shmOff, node, walk));
    }

    static GraphEdge graphEdge(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        String nextNode = null;
        String name = null;
        List<TensorPointerInfo> tensorInfo = null;
        boolean persist = false;
        boolean conductorNewToken = false;
        boolean isStreaming = false;
        String targetPartition = null;
        String outputModality = null;
        boolean persistForLoop = false;
        boolean finalStreamChunk = false;
        int totalFanin = 1;
        Integer shardDim = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "next_node": nextNode = r.string(); break;
                case "name": name = r.string(); break;
                case "tensor_info": tensorInfo = r.list(ModelDecoding::tensorPointerInfo); break;
                case "persist": persist = or(r.bool(), false); break;
                case "conductor_new_token": conductorNewToken = or(r.bool(), false); break;
                case "is_streaming": isStreaming = or(r.bool(), false); break;
                case "target_partition": targetPartition = r.string(); break;
                case "output_modality": outputModality = r.string(); break;
                case "persist_for_loop": persistForLoop = or(r.bool(), false); break;
                case "final_stream_chunk": finalStreamChunk = or(r.bool(), false); break;
                case "total_fanin": totalFanin = or(r.int32(), 1); break;
                case "shard_dim": shardDim = r.int32(); break;
                default: r.skip();
            }
        }
        String nextNodeV = r.required(nextNode, "next_node");
        String nameV = r.required(name, "name");
        List<TensorPointerInfo> ti = tensorInfo;
        boolean p = persist;
        boolean cnt = conductorNewToken;
        boolean s = isStreaming;
        String tp = targetPartition;
        String om = outputModality;
        boolean pfl = persistForLoop;
        boolean fsc = finalStreamChunk;
        int tf = totalFanin;
        Integer sd = shardDim;
        return r.build(() -> new GraphEdge(nextNodeV, nameV, ti, p, cnt, s, tp, om, pfl, fsc, tf, sd));
    }

    static NestedLoopIndices nestedLoopIndices(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        List<String> order = null;
        Map<String, Integer> indices = null;
        Integer fwd = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "loop_name_order": order = r.strings(); break;
                case "loop_indices": indices = r.object(WireReader::int32); break;
                case "wg_fwd_pass_idx": fwd = r.int32(); break;
                default: r.skip();
            }
        }
        List<String> orderV = r.required(order, "loop_name_order");
        Map<String, Integer> indicesV = r.required(indices, "loop_indices");
        int fwdV = r.required(fwd, "wg_fwd_pass_idx");
        return r.build(() -> new NestedLoopIndices(orderV, indicesV, fwdV));
    }

    static SamplingConfig samplingConfig(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        SamplingConfig d = SamplingConfig.DEFAULT;
        Integer vocabSize = d.vocabSize();
        double temperature = d.temperature();
        int topK = d.topK();
        double topP = d.topP();
        boolean ignoreEos = d.ignoreEos();
        double repetitionPenalty = d.repetitionPenalty();
        long seed = d.seed();
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "vocab_size": vocabSize = r.int32(); break;
                case "temperature": temperature = or(r.float64(), d.temperature()); break;
                case "top_k": topK = or(r.int32(), d.topK()); break;
                case "top_p": topP = or(r.float64(), d.topP()); break;
                case "ignore_eos": ignoreEos = or(r.bool(), d.ignoreEos()); break;
                case "repetition_penalty": repetitionPenalty = or(r.float64(), d.repetitionPenalty()); break;
                case "seed": seed = or(r.int64(), d.seed()); break;
                default: r.skip();
            }
        }
        return new SamplingConfig(vocabSize, temperature, topK, topP, ignoreEos, repetitionPenalty, seed);
    }

    static MultiSamplingConfig multiSamplingConfig(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        SamplingConfig main = null;
        Map<String, SamplingConfig> aux = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "main": main = samplingConfig(r); break;
                case "aux": aux = r.object(ModelDecoding::samplingConfig); break;
                default: r.skip();
            }
        }
        SamplingConfig mainV = main;
        Map<String, SamplingConfig> auxV = aux;
        return r.build(() -> new MultiSamplingConfig(mainV, auxV));
    }

    static PublishedSequence publishedSequence(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        Integer rank = null;
        String label = null;
        Integer seqLen = null;
        List<Integer> pages = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "rank": rank = r.int32(); break;
                case "label": label = r.string(); break;
                case "seq_len": seqLen = r.int32(); break;
                case "page_indices": pages = r.int32s(); break;
                default: r.skip();
            }
        }
        int rankV = r.required(rank, "rank");
        String labelV = r.required(label, "label");
        int seqLenV = r.required(seqLen, "seq_len");
        List<Integer> pagesV = r.required(pages, "page_indices");
        return r.build(() -> new PublishedSequence(rankV, labelV, seqLenV, pagesV));
    }

    static PublishedInfo publishedInfo(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        String type = null;
        int worldSize = 1;
        List<PublishedSequence> sequences = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "resource_type": type = r.string(); break;
                case "world_size": worldSize = or(r.int32(), 1); break;
                case "sequences": sequences = r.list(ModelDecoding::publishedSequence); break;
                default: r.skip();
            }
        }
        String typeV = r.required(type, "resource_type");
        int ws = worldSize;
        List<PublishedSequence> seqs = sequences;
        return r.build(() -> new PublishedInfo(typeV, ws, seqs));
    }

    static CurrentForwardPassInfo currentForwardPassInfo(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        String requestId = null;
        String graphWalk = null;
        Boolean requiresCfg = null;
        Integer fwdIndex = null;
        Long randomSeed = null;
        Integer maxTokens = null;
        Map<String, MultiSamplingConfig> samplingConfig = null;
        Map<String, String> stepMetadata = null;
        Map<String, PublishedInfo> publishInfo = null;
        String partitionName = null;
        Map<String, NestedLoopIndices> loopStopTimes = null;
        Map<String, Integer> iterCounts = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": requestId = r.string(); break;
                case "graph_walk": graphWalk = r.string(); break;
                case "requires_cfg": requiresCfg = r.bool(); break;
                case "fwd_index": fwdIndex = r.int32(); break;
                case "random_seed": randomSeed = r.int64(); break;
                case "max_tokens": maxTokens = r.int32(); break;
                case "sampling_config": samplingConfig = r.object(ModelDecoding::multiSamplingConfig); break;
                case "step_metadata": stepMetadata = r.object(WireReader::string); break;
                case "resource_publish_info": publishInfo = r.object(ModelDecoding::publishedInfo); break;
                case "partition_name": partitionName = r.string(); break;
                case "loop_stop_times": loopStopTimes = r.object(ModelDecoding::nestedLoopIndices); break;
                case "dynamic_loop_iter_counts": iterCounts = r.object(WireReader::int32); break;
                default: r.skip();
            }
        }
        String rid = r.required(requestId, "request_id");
        String walk = r.required(graphWalk, "graph_walk");
        boolean cfg = r.required(requiresCfg, "requires_cfg");
        int fwd = r.required(fwdIndex, "fwd_index");
        long seed = r.required(randomSeed, "random_seed");
        int max = r.required(maxTokens, "max_tokens");
        Map<String, MultiSamplingConfig> sc = samplingConfig;
        Map<String, String> sm = stepMetadata;
        Map<String, PublishedInfo> pi = publishInfo;
        String pn = partitionName;
        Map<String, NestedLoopIndices> lst = loopStopTimes;
        Map<String, Integer> ic = iterCounts;
        return r.build(() -> new CurrentForwardPassInfo(rid, walk, cfg, fwd, seed, max, sc, sm, pi, pn, lst, ic));
    }

    static GraphTiming graphTiming(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        String node = null;
        String walk = null;
        Long execCount = null;
        Double total = null;
        Double forward = null;
        Double pre = null;
        Double post = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "node": node = r.string(); break;
                case "graph_walk": walk = r.string(); break;
                case "exec_count": execCount = r.int64(); break;
                case "total_time": total = r.float64(); break;
                case "forward_time": forward = r.float64(); break;
                case "preprocess_time": pre = r.float64(); break;
                case "postprocess_time": post = r.float64(); break;
                default: r.skip();
            }
        }
        return new GraphTiming(r.required(node, "node"), r.required(walk, "graph_walk"),
                r.required(execCount, "exec_count"), r.required(total, "total_time"),
                r.required(forward, "forward_time"), r.required(pre, "preprocess_time"),
                r.required(post, "postprocess_time"));
    }

    static RxInfo rxInfo(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        String edge = null;
        String source = null;
        String dest = null;
        long count = 0;
        long numBytes = 0;
        double time = 0.0;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "edge_name": edge = r.string(); break;
                case "source_entity": source = r.string(); break;
                case "dest_entity": dest = r.string(); break;
                case "count": count = or(r.int64(), 0L); break;
                case "num_bytes": numBytes = or(r.int64(), 0L); break;
                case "time": time = or(r.float64(), 0.0); break;
                default: r.skip();
            }
        }
        return new RxInfo(r.required(edge, "edge_name"), r.required(source, "source_entity"),
                r.required(dest, "dest_entity"), count, numBytes, time);
    }

    static TxInfo txInfo(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        String edge = null;
        String source = null;
        long count = 0;
        long numBytes = 0;
        double time = 0.0;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "edge_name": edge = r.string(); break;
                case "source_entity": source = r.string(); break;
                case "count": count = or(r.int64(), 0L); break;
                case "num_bytes": numBytes = or(r.int64(), 0L); break;
                case "time": time = or(r.float64(), 0.0); break;
                default: r.skip();
            }
        }
        return new TxInfo(r.required(edge, "edge_name"), r.required(source, "source_entity"), count, numBytes, time);
    }

    static <T> T or(T value, T dflt) {
        return value == null ? dflt : value;
    }
}
