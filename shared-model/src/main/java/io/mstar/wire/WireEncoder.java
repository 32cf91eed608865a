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
import tools.jackson.core.JsonGenerator;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Writes bodies and their value types. Field order follows the spec; null (nullable) fields are
 * omitted; maps and sets come out in the sorted order their records hold them in.
 */
final class WireEncoder {

    private final JsonGenerator g;

    WireEncoder(JsonGenerator g) {
        this.g = g;
    }

    void body(MessageBody body) {
        g.writeStartObject();
        if (body instanceof WorkerGraphsDone) {
            workerGraphsDone((WorkerGraphsDone) body);
        } else if (body instanceof InputSignals) {
            inputSignals((InputSignals) body);
        } else if (body instanceof ScheduleTPNode) {
            scheduleTPNode((ScheduleTPNode) body);
        } else if (body instanceof TensorReceived) {
            TensorReceived b = (TensorReceived) body;
            str("request_id", b.requestId());
            g.writeName("successful_tensors");
            pairs(b.successfulTensors(), (k, v) -> { g.writeNumber(k); g.writeNumber(v); });
            g.writeName("failed_tensor_ids");
            longs(b.failedTensorIds());
        } else if (body instanceof UnpersistTensors) {
            UnpersistTensors b = (UnpersistTensors) body;
            str("request_id", b.requestId());
            g.writeName("uuid_to_ref_count");
            pairs(b.uuidToRefCount(), (k, v) -> { g.writeNumber(k); g.writeNumber(v); });
        } else if (body instanceof NewRequest) {
            newRequest((NewRequest) body);
        } else if (body instanceof RemoveRequest) {
            RemoveRequest b = (RemoveRequest) body;
            str("request_id", b.requestId());
            g.writeNumberProperty("source", b.source().code());
            g.writeNumberProperty("after_tp_seq", b.afterTpSeq());
        } else if (body instanceof ConductorHeartbeat) {
            g.writeNumberProperty("interval_ms", ((ConductorHeartbeat) body).intervalMs());
        } else if (body instanceof DrainRequest) {
            DrainRequest b = (DrainRequest) body;
            str("request_id", b.requestId());
            g.writeNumberProperty("source", b.source().code());
            if (b.outcome() != null) {
                str("outcome", b.outcome().value());
            }
        } else if (body instanceof StopLoops) {
            StopLoops b = (StopLoops) body;
            str("request_id", b.requestId());
            g.writeName("loop_names");
            strings(b.loopNames());
            str("partition_name", b.partitionName());
            g.writeName("loop_stop_times");
            object(b.loopStopTimes(), this::nestedLoopIndices);
        } else if (body instanceof CollectiveBootstrap b) {
            str("collective", b.collective());
            g.writeNumberProperty("generation", b.generation());
            str("nccl_unique_id", b.ncclUniqueId());
        } else if (body instanceof TPNoSpeculation) {
            TPNoSpeculation b = (TPNoSpeculation) body;
            str("node_name", b.nodeName());
            str("graph_walk", b.graphWalk());
            g.writeNumberProperty("spec_from_seq", b.specFromSeq());
        } else if (body instanceof AbortRequest) {
            str("request_id", ((AbortRequest) body).requestId());
        } else if (body instanceof FailRequests) {
            FailRequests b = (FailRequests) body;
            g.writeName("errors");
            object(b.errors(), g::writeString);
            g.writeName("error_types");
            object(b.errorTypes(), t -> g.writeString(t.value()));
        } else if (body instanceof NewRequestConductor) {
            newRequestConductor((NewRequestConductor) body);
        } else if (body instanceof ReadsDone) {
            ReadsDone b = (ReadsDone) body;
            str("request_id", b.requestId());
            str("entity_id", b.entityId());
        } else if (body instanceof ResultTensors) {
            ResultTensors b = (ResultTensors) body;
            str("request_id", b.requestId());
            str("modality", b.modality());
            g.writeName("graph_edge");
            graphEdge(b.graphEdge());
            g.writeName("loop_indices");
            nestedLoopIndices(b.loopIndices());
            g.writeName("metadata");
            object(b.metadata(), g::writeString);
            g.writeName("inline_data");
            strings(b.inlineData());
        } else if (body instanceof SetupDone) {
            str("worker_id", ((SetupDone) body).workerId());
        } else {
            throw new IllegalArgumentException("unknown body " + body.getClass().getName());
        }
        g.writeEndObject();
    }

    private void workerGraphsDone(WorkerGraphsDone b) {
        str("request_id", b.requestId());
        g.writeName("worker_graph_ids");
        ints(b.workerGraphIds());
        g.writeBooleanProperty("is_first_tp_rank", b.isFirstTpRank());
        g.writeName("persist_signals");
        object(b.persistSignals(), v -> list(v, this::tensorPointerInfo));
        g.writeName("new_token_counts");
        object(b.newTokenCounts(), g::writeNumber);
        g.writeName("output_signal_names");
        strings(b.outputSignalNames());
        g.writeName("resource_publish_info");
        object(b.resourcePublishInfo(), this::publishedInfo);
        str("partition_name", b.partitionName());
        g.writeBooleanProperty("partition_done", b.partitionDone());
        g.writeName("stream_tokens_consumed");
        object(b.streamTokensConsumed(), g::writeNumber);
        g.writeName("output_loop_indices");
        object(b.outputLoopIndices(), this::nestedLoopIndices);
        g.writeName("graph_timings");
        list(b.graphTimings().values(), this::graphTiming);
        g.writeName("rx_info");
        list(b.rxInfo(), this::rxInfo);
        g.writeName("tx_info");
        list(b.txInfo(), this::txInfo);
    }

    private void inputSignals(InputSignals b) {
        str("request_id", b.requestId());
        g.writeName("inputs");
        list(b.inputs(), this::graphEdge);
        g.writeName("request_info");
        currentForwardPassInfo(b.requestInfo());
        str("partition_name", b.partitionName());
        g.writeName("producer_done");
        strings(b.producerDone());
        if (b.inline()) { // an extension: absent means read through the transport, so messages without it stay as they were
            g.writeName("inline_data");
            strings(b.inlineData());
        }
    }

    private void scheduleTPNode(ScheduleTPNode b) {
        str("node_name", b.nodeName());
        str("graph_walk", b.graphWalk());
        g.writeName("request_ids");
        strings(b.requestIds());
        g.writeBooleanProperty("speculative", b.speculative());
        g.writeNumberProperty("spec_seq", b.specSeq());
        g.writeNumberProperty("spec_from_seq", b.specFromSeq());
        g.writeName("resident_delta");
        OffloadDelta d = b.residentDelta();
        int n = d.size();
        g.writeStartObject();
        g.writeName("rids");
        g.writeStartArray();
        for (int i = 0; i < n; i++) {
            g.writeString(d.ridAt(i));
        }
        g.writeEndArray();
        g.writeName("is_offload");
        g.writeStartArray();
        for (int i = 0; i < n; i++) {
            g.writeBoolean(d.isOffloadAt(i));
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private void newRequest(NewRequest b) {
        str("request_id", b.requestId());
        g.writeName("partition_worker_graph_ids");
        ints(b.partitionWorkerGraphIds());
        g.writeName("worker_graph_to_workers");
        pairs(b.workerGraphToWorkers(), (k, v) -> { g.writeNumber(k); strings(v); });
        g.writeName("initial_inputs");
        list(b.initialInputs(), this::graphEdge);
        g.writeName("request_info");
        currentForwardPassInfo(b.requestInfo());
        if (b.inline()) { // an extension, absent when empty: as InputSignals.inline_data
            g.writeName("inline_data");
            strings(b.inlineData());
        }
    }

    private void newRequestConductor(NewRequestConductor b) {
        str("request_id", b.requestId());
        g.writeName("initial_signals");
        object(b.initialSignals(), v -> list(v, this::tensorPointerInfo));
        g.writeName("initial_input_modalities");
        strings(b.initialInputModalities());
        g.writeName("initial_output_modalities");
        strings(b.initialOutputModalities());
        g.writeName("input_metadata");
        object(b.inputMetadata(), v -> list(v, this::any));
        g.writeName("model_kwargs");
        any(b.modelKwargs());
    }

    // ---- value types ------------------------------------------------------------------------

    void tensorPointerInfo(TensorPointerInfo t) {
        g.writeStartObject();
        g.writeNumberProperty("uuid", t.uuid());
        g.writeName("dims");
        longs(t.dims());
        g.writeName("stride");
        longs(t.stride());
        str("dtype", t.dtype());
        g.writeNumberProperty("nbytes", t.nbytes());
        g.writeNumberProperty("address", t.address());
        g.writeNumberProperty("offset", t.offset());
        str("source_session_id", t.sourceSessionId());
        str("source_entity", t.sourceEntity());
        g.writeNumberProperty("source_tp_size", t.sourceTpSize());
        g.writeNumberProperty("source_tp_rank", t.sourceTpRank());
        optStr("shm_segment", t.shmSegment());
        g.writeNumberProperty("shm_offset", t.shmOffset());
        optStr("source_node_name", t.sourceNodeName());
        optStr("source_graph_walk", t.sourceGraphWalk());
        g.writeEndObject();
    }

    private void graphEdge(GraphEdge e) {
        g.writeStartObject();
        str("next_node", e.nextNode());
        str("name", e.name());
        g.writeName("tensor_info");
        list(e.tensorInfo(), this::tensorPointerInfo);
        g.writeBooleanProperty("persist", e.persist());
        g.writeBooleanProperty("conductor_new_token", e.conductorNewToken());
        g.writeBooleanProperty("is_streaming", e.isStreaming());
        optStr("target_partition", e.targetPartition());
        str("output_modality", e.outputModality());
        g.writeBooleanProperty("persist_for_loop", e.persistForLoop());
        g.writeBooleanProperty("final_stream_chunk", e.finalStreamChunk());
        g.writeNumberProperty("total_fanin", e.totalFanin());
        if (e.shardDim() != null) {
            g.writeNumberProperty("shard_dim", e.shardDim().intValue());
        }
        g.writeEndObject();
    }

    private void nestedLoopIndices(NestedLoopIndices n) {
        g.writeStartObject();
        g.writeName("loop_name_order");
        strings(n.loopNameOrder());
        g.writeName("loop_indices");
        object(n.loopIndices(), g::writeNumber);
        g.writeNumberProperty("wg_fwd_pass_idx", n.wgFwdPassIdx());
        g.writeEndObject();
    }

    private void currentForwardPassInfo(CurrentForwardPassInfo c) {
        g.writeStartObject();
        str("request_id", c.requestId());
        str("graph_walk", c.graphWalk());
        g.writeBooleanProperty("requires_cfg", c.requiresCfg());
        g.writeNumberProperty("fwd_index", c.fwdIndex());
        g.writeNumberProperty("random_seed", c.randomSeed());
        g.writeNumberProperty("max_tokens", c.maxTokens());
        g.writeName("sampling_config");
        object(c.samplingConfig(), this::multiSamplingConfig);
        g.writeName("step_metadata");
        object(c.stepMetadata(), g::writeString);
        g.writeName("resource_publish_info");
        object(c.resourcePublishInfo(), this::publishedInfo);
        str("partition_name", c.partitionName());
        g.writeName("loop_stop_times");
        object(c.loopStopTimes(), this::nestedLoopIndices);
        g.writeName("dynamic_loop_iter_counts");
        object(c.dynamicLoopIterCounts(), g::writeNumber);
        g.writeEndObject();
    }

    private void multiSamplingConfig(MultiSamplingConfig m) {
        g.writeStartObject();
        g.writeName("main");
        samplingConfig(m.main());
        g.writeName("aux");
        object(m.aux(), this::samplingConfig);
        g.writeEndObject();
    }

    private void samplingConfig(SamplingConfig s) {
        g.writeStartObject();
        if (s.vocabSize() != null) {
            g.writeNumberProperty("vocab_size", s.vocabSize().intValue());
        }
        dbl("temperature", s.temperature());
        g.writeNumberProperty("top_k", s.topK());
        dbl("top_p", s.topP());
        g.writeBooleanProperty("ignore_eos", s.ignoreEos());
        dbl("repetition_penalty", s.repetitionPenalty());
        g.writeNumberProperty("seed", s.seed());
        g.writeEndObject();
    }

    private void publishedInfo(PublishedInfo p) {
        g.writeStartObject();
        str("resource_type", p.resourceType());
        g.writeNumberProperty("world_size", p.worldSize());
        g.writeName("sequences");
        list(p.sequences(), this::publishedSequence);
        g.writeEndObject();
    }

    private void publishedSequence(PublishedSequence s) {
        g.writeStartObject();
        g.writeNumberProperty("rank", s.rank());
        str("label", s.label());
        g.writeNumberProperty("seq_len", s.seqLen());
        g.writeName("page_indices");
        ints(s.pageIndices());
        g.writeEndObject();
    }

    private void graphTiming(GraphTiming t) {
        g.writeStartObject();
        str("node", t.node());
        str("graph_walk", t.graphWalk());
        g.writeNumberProperty("exec_count", t.execCount());
        dbl("total_time", t.totalTime());
        dbl("forward_time", t.forwardTime());
        dbl("preprocess_time", t.preprocessTime());
        dbl("postprocess_time", t.postprocessTime());
        g.writeEndObject();
    }

    private void rxInfo(RxInfo x) {
        g.writeStartObject();
        str("edge_name", x.edgeName());
        str("source_entity", x.sourceEntity());
        str("dest_entity", x.destEntity());
        g.writeNumberProperty("count", x.count());
        g.writeNumberProperty("num_bytes", x.numBytes());
        dbl("time", x.time());
        g.writeEndObject();
    }

    private void txInfo(TxInfo x) {
        g.writeStartObject();
        str("edge_name", x.edgeName());
        str("source_entity", x.sourceEntity());
        g.writeNumberProperty("count", x.count());
        g.writeNumberProperty("num_bytes", x.numBytes());
        dbl("time", x.time());
        g.writeEndObject();
    }

    /** A free-form value in {@link JsonValues} form. */
    private void any(Object v) {
        if (v == null) {
            g.writeNull();
        } else if (v instanceof String) {
            g.writeString((String) v);
        } else if (v instanceof Boolean) {
            g.writeBoolean((Boolean) v);
        } else if (v instanceof Long) {
            g.writeNumber((Long) v);
        } else if (v instanceof Double) {
            finite((Double) v, "free-form value");
            g.writeNumber((Double) v);
        } else if (v instanceof List) {
            g.writeStartArray();
            for (Object o : (List<?>) v) {
                any(o);
            }
            g.writeEndArray();
        } else if (v instanceof Map) {
            g.writeStartObject();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                g.writeName((String) e.getKey());
                any(e.getValue());
            }
            g.writeEndObject();
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
        }
    }

    // ---- primitives -------------------------------------------------------------------------

    private void str(String name, String value) {
        g.writeStringProperty(name, value);
    }

    private void optStr(String name, String value) {
        if (value != null) {
            g.writeStringProperty(name, value);
        }
    }

    private void dbl(String name, double value) {
        finite(value, name);
        g.writeNumberProperty(name, value);
    }

    private static void finite(double value, String name) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException(name + " must be finite on the wire, got " + value);
        }
    }

    private void strings(Collection<String> values) {
        g.writeStartArray();
        for (String s : values) {
            g.writeString(s);
        }
        g.writeEndArray();
    }

    private void ints(List<Integer> values) {
        g.writeStartArray();
        for (int i = 0, n = values.size(); i < n; i++) {
            g.writeNumber(values.get(i).intValue());
        }
        g.writeEndArray();
    }

    private void longs(List<Long> values) {
        g.writeStartArray();
        for (int i = 0, n = values.size(); i < n; i++) {
            g.writeNumber(values.get(i).longValue());
        }
        g.writeEndArray();
    }

    /** Functional writer of one value; named so lambdas over the generator read clearly. */
    @FunctionalInterface
    private interface Writer<T> {
        void write(T value);
    }

    private <T> void list(Collection<T> values, Writer<T> element) {
        g.writeStartArray();
        for (T v : values) {
            element.write(v);
        }
        g.writeEndArray();
    }

    private <V> void object(Map<String, V> map, Writer<V> value) {
        g.writeStartObject();
        for (Map.Entry<String, V> e : map.entrySet()) {
            g.writeName(e.getKey());
            value.write(e.getValue());
        }
        g.writeEndObject();
    }

    private <K, V> void pairs(Map<K, V> map, BiConsumer<K, V> pair) {
        g.writeStartArray();
        for (Map.Entry<K, V> e : map.entrySet()) {
            g.writeStartArray();
            pair.accept(e.getKey(), e.getValue());
            g.writeEndArray();
        }
        g.writeEndArray();
    }
}
