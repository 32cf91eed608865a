package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.NodeAndGraphWalk;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.profile.GraphTiming;
import io.mstar.profile.RxInfo;
import io.mstar.profile.TxInfo;
import io.mstar.request.CurrentForwardPassInfo;
import io.mstar.request.PublishedInfo;
import io.mstar.wire.WireFormatException.Reason;
import tools.jackson.core.JsonToken;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static io.mstar.wire.ModelDecoding.or;

/** Decoders of the message bodies; the parser sits on the body's START_OBJECT. */
final class BodyDecoding {

    private BodyDecoding() {
    }

    static WorkerMessageBody worker(WorkerMessageType type, WireReader r) {
        switch (type) {
            case COLLECTIVE_BOOTSTRAP: return collectiveBootstrap(r);
            case CONDUCTOR_HEARTBEAT: return conductorHeartbeat(r);
            case DRAIN_REQUEST: return drainRequest(r);
            case INPUT_SIGNALS: return inputSignals(r);
            case NEW_REQUEST: return newRequest(r);
            case REMOVE_REQUEST: return removeRequest(r);
            case SCHEDULE_TP: return scheduleTPNode(r);
            case STOP_LOOPS: return stopLoops(r);
            case TENSOR_RECEIVED: return tensorReceived(r);
            case TP_NO_SPEC: return tpNoSpeculation(r);
            case UNPERSIST_TENSORS: return unpersistTensors(r);
            default: throw new IllegalStateException("unhandled " + type);
        }
    }

    static ConductorMessageBody conductor(ConductorMessageType type, WireReader r) {
        switch (type) {
            case ABORT_REQUEST: return abortRequest(r);
            case FAIL_REQUESTS: return failRequests(r);
            case NEW_REQUEST: return newRequestConductor(r);
            case READS_DONE: return readsDone(r);
            case RESULT_TENSORS: return resultTensors(r);
            case SETUP_DONE: return setupDone(r);
            case WORKER_GRAPHS_DONE: return workerGraphsDone(r);
            default: throw new IllegalStateException("unhandled " + type);
        }
    }

    // ---- shared pieces ----------------------------------------------------------------------

    /** An outcome this build does not know reads as none: the worker then counts the end by what it saw. */
    static RequestOutcome requestOutcome(WireReader r) {
        String value = r.string();
        return value == null ? null : RequestOutcome.fromValue(value);
    }

    static MessageSource messageSource(WireReader r) {
        Integer code = r.int32();
        if (code == null) {
            return null;
        }
        MessageSource s = MessageSource.fromCode(code);
        if (s == null) {
            throw r.error(Reason.INVALID_VALUE, "unknown message source " + code);
        }
        return s;
    }

    static OffloadDelta offloadDelta(WireReader r) {
        if (!r.startObject()) {
            return null;
        }
        List<String> rids = null;
        List<Boolean> isOffload = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "rids": rids = r.strings(); break;
                case "is_offload": isOffload = r.bools(); break;
                default: r.skip();
            }
        }
        // Both default to empty lists in the spec (field factories): {} is the empty delta.
        List<String> ridsV = rids == null ? List.of() : rids;
        List<Boolean> offV = isOffload == null ? List.of() : isOffload;
        return r.build(() -> OffloadDelta.fromWire(ridsV, offV));
    }

    private static <T extends Comparable<? super T>> Set<T> set(WireReader r, WireReader.ValueReader<T> element) {
        List<T> list = r.list(element);
        return list == null ? null : new TreeSet<>(list);
    }

    private static Map<NodeAndGraphWalk, GraphTiming> graphTimings(WireReader r) {
        if (r.p.currentToken() == JsonToken.VALUE_NULL) {
            return null;
        }
        if (r.p.currentToken() != JsonToken.START_ARRAY) {
            throw r.error(Reason.WRONG_TYPE, "expected an array of graph timings");
        }
        Map<NodeAndGraphWalk, GraphTiming> out = new TreeMap<>();
        while (r.p.nextToken() != JsonToken.END_ARRAY) {
            GraphTiming t = ModelDecoding.graphTiming(r);
            if (t == null) {
                throw r.error(Reason.WRONG_TYPE, "null is not allowed here");
            }
            if (out.put(t.key(), t) != null) {
                throw r.error(Reason.INVALID_VALUE, "duplicate graph timing for node " + t.node()
                        + " in walk " + t.graphWalk());
            }
        }
        return out;
    }

    // ---- worker bodies ----------------------------------------------------------------------

    static DrainRequest drainRequest(WireReader r) {
        r.startObject();
        String rid = null;
        MessageSource source = null;
        RequestOutcome outcome = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "source": source = messageSource(r); break;
                case "outcome": outcome = requestOutcome(r); break;
                default: r.skip();
            }
        }
        return new DrainRequest(r.required(rid, "request_id"), source, outcome);
    }

    static InputSignals inputSignals(WireReader r) {
        r.startObject();
        String rid = null;
        List<GraphEdge> inputs = null;
        CurrentForwardPassInfo info = null;
        String partition = null;
        Set<String> producerDone = null;
        List<String> inlineData = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "inputs": inputs = r.list(ModelDecoding::graphEdge); break;
                case "inline_data": inlineData = r.list(WireReader::string); break;
                case "request_info": info = ModelDecoding.currentForwardPassInfo(r); break;
                case "partition_name": partition = r.string(); break;
                case "producer_done": producerDone = set(r, WireReader::string); break;
                default: r.skip();
            }
        }
        return new InputSignals(r.required(rid, "request_id"), r.required(inputs, "inputs"),
                r.required(info, "request_info"), partition, producerDone, inlineData);
    }

    static NewRequest newRequest(WireReader r) {
        r.startObject();
        String rid = null;
        List<Integer> ids = null;
        Map<Integer, List<String>> toWorkers = null;
        List<GraphEdge> inputs = null;
        CurrentForwardPassInfo info = null;
        List<String> inlineData = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "partition_worker_graph_ids": ids = r.int32s(); break;
                case "worker_graph_to_workers":
                    toWorkers = r.pairs(WireReader::int32, x -> x.strings());
                    break;
                case "initial_inputs": inputs = r.list(ModelDecoding::graphEdge); break;
                case "request_info": info = ModelDecoding.currentForwardPassInfo(r); break;
                case "inline_data": inlineData = r.list(WireReader::string); break;
                default: r.skip();
            }
        }
        return new NewRequest(r.required(rid, "request_id"), r.required(ids, "partition_worker_graph_ids"),
                r.required(toWorkers, "worker_graph_to_workers"), r.required(inputs, "initial_inputs"),
                r.required(info, "request_info"), inlineData);
    }

    static ConductorHeartbeat conductorHeartbeat(WireReader r) {
        r.startObject();
        Long interval = null;
        String f;
        while ((f = r.nextField()) != null) {
            if (f.equals("interval_ms")) {
                interval = r.int64();
            } else {
                r.skip();
            }
        }
        long ms = r.required(interval, "interval_ms");
        if (ms <= 0) {
            throw r.error(Reason.INVALID_VALUE, "interval_ms must be positive, was " + ms);
        }
        return new ConductorHeartbeat(ms);
    }

    static RemoveRequest removeRequest(WireReader r) {
        r.startObject();
        String rid = null;
        MessageSource source = null;
        long afterTpSeq = -1;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "source": source = messageSource(r); break;
                case "after_tp_seq": afterTpSeq = or(r.int64(), -1L); break;
                default: r.skip();
            }
        }
        return new RemoveRequest(r.required(rid, "request_id"), source, afterTpSeq);
    }

    static ScheduleTPNode scheduleTPNode(WireReader r) {
        r.startObject();
        String node = null;
        String walk = null;
        List<String> rids = null;
        boolean speculative = false;
        long specSeq = -1;
        long specFromSeq = -1;
        OffloadDelta delta = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "node_name": node = r.string(); break;
                case "graph_walk": walk = r.string(); break;
                case "request_ids": rids = r.strings(); break;
                case "speculative": speculative = or(r.bool(), false); break;
                case "spec_seq": specSeq = or(r.int64(), -1L); break;
                case "spec_from_seq": specFromSeq = or(r.int64(), -1L); break;
                case "resident_delta": delta = offloadDelta(r); break;
                default: r.skip();
            }
        }
        return new ScheduleTPNode(r.required(node, "node_name"), r.required(walk, "graph_walk"),
                r.required(rids, "request_ids"), speculative, specSeq, specFromSeq, delta);
    }

    static ResultTensors resultTensors(WireReader r) {
        r.startObject();
        String rid = null;
        String modality = null;
        GraphEdge edge = null;
        NestedLoopIndices indices = null;
        Map<String, String> metadata = null;
        List<String> inlineData = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "modality": modality = r.string(); break;
                case "graph_edge": edge = ModelDecoding.graphEdge(r); break;
                case "loop_indices": indices = ModelDecoding.nestedLoopIndices(r); break;
                case "metadata": metadata = r.object(WireReader::string); break;
                case "inline_data": inlineData = r.list(WireReader::string); break;
                default: r.skip();
            }
        }
        return new ResultTensors(r.required(rid, "request_id"), r.required(modality, "modality"),
                r.required(edge, "graph_edge"), r.required(indices, "loop_indices"), metadata, inlineData);
    }

    static StopLoops stopLoops(WireReader r) {
        r.startObject();
        String rid = null;
        Set<String> names = null;
        String partition = null;
        Map<String, NestedLoopIndices> stopTimes = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "loop_names": names = set(r, WireReader::string); break;
                case "partition_name": partition = r.string(); break;
                case "loop_stop_times": stopTimes = r.object(ModelDecoding::nestedLoopIndices); break;
                default: r.skip();
            }
        }
        return new StopLoops(r.required(rid, "request_id"), r.required(names, "loop_names"),
                r.required(partition, "partition_name"), stopTimes);
    }

    static TensorReceived tensorReceived(WireReader r) {
        r.startObject();
        String rid = null;
        Map<Long, Integer> ok = null;
        List<Long> failed = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "successful_tensors": ok = r.pairs(WireReader::int64, WireReader::int32); break;
                case "failed_tensor_ids": failed = r.int64s(); break;
                default: r.skip();
            }
        }
        return new TensorReceived(r.required(rid, "request_id"), r.required(ok, "successful_tensors"),
                r.required(failed, "failed_tensor_ids"));
    }

    static TPNoSpeculation tpNoSpeculation(WireReader r) {
        r.startObject();
        String node = null;
        String walk = null;
        Long specFromSeq = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "node_name": node = r.string(); break;
                case "graph_walk": walk = r.string(); break;
                case "spec_from_seq": specFromSeq = r.int64(); break;
                default: r.skip();
            }
        }
        return new TPNoSpeculation(r.required(node, "node_name"), r.required(walk, "graph_walk"),
                r.required(specFromSeq, "spec_from_seq"));
    }

    static CollectiveBootstrap collectiveBootstrap(WireReader r) {
        r.startObject();
        String collective = null;
        Long generation = null;
        String id = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "collective": collective = r.string(); break;
                case "generation": generation = r.int64(); break;
                case "nccl_unique_id": id = r.string(); break;
                default: r.skip();
            }
        }
        return new CollectiveBootstrap(r.required(collective, "collective"), r.required(generation, "generation"),
                r.required(id, "nccl_unique_id"));
    }

    static UnpersistTensors unpersistTensors(WireReader r) {
        r.startObject();
        String rid = null;
        Map<Long, Integer> counts = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "uuid_to_ref_count": counts = r.pairs(WireReader::int64, WireReader::int32); break;
                default: r.skip();
            }
        }
        return new UnpersistTensors(r.required(rid, "request_id"), r.required(counts, "uuid_to_ref_count"));
    }

    // ---- conductor bodies -------------------------------------------------------------------

    static AbortRequest abortRequest(WireReader r) {
        r.startObject();
        String rid = null;
        String f;
        while ((f = r.nextField()) != null) {
            if (f.equals("request_id")) {
                rid = r.string();
            } else {
                r.skip();
            }
        }
        return new AbortRequest(r.required(rid, "request_id"));
    }

    static FailRequests failRequests(WireReader r) {
        r.startObject();
        Map<String, String> errors = null;
        Map<String, WorkerErrorType> types = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "errors": errors = r.object(WireReader::string); break;
                case "error_types": types = r.object(t -> WorkerErrorType.fromValue(t.string())); break;
                default: r.skip();
            }
        }
        return new FailRequests(r.required(errors, "errors"), types);
    }

    static NewRequestConductor newRequestConductor(WireReader r) {
        r.startObject();
        String rid = null;
        Map<String, List<TensorPointerInfo>> signals = null;
        List<String> inModalities = null;
        List<String> outModalities = null;
        Map<String, List<Map<String, Object>>> metadata = null;
        Map<String, Object> kwargs = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "initial_signals":
                    signals = r.object(x -> x.list(ModelDecoding::tensorPointerInfo));
                    break;
                case "initial_input_modalities": inModalities = r.strings(); break;
                case "initial_output_modalities": outModalities = r.strings(); break;
                case "input_metadata": metadata = r.object(x -> x.list(WireReader::anyObject)); break;
                case "model_kwargs": kwargs = r.anyObject(); break;
                default: r.skip();
            }
        }
        String ridV = r.required(rid, "request_id");
        Map<String, List<TensorPointerInfo>> signalsV = r.required(signals, "initial_signals");
        List<String> inV = r.required(inModalities, "initial_input_modalities");
        List<String> outV = r.required(outModalities, "initial_output_modalities");
        Map<String, List<Map<String, Object>>> metadataV = r.required(metadata, "input_metadata");
        Map<String, Object> kwargsV = r.required(kwargs, "model_kwargs");
        return r.build(() -> new NewRequestConductor(ridV, signalsV, inV, outV, metadataV, kwargsV));
    }

    static ReadsDone readsDone(WireReader r) {
        r.startObject();
        String rid = null;
        String entity = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "entity_id": entity = r.string(); break;
                default: r.skip();
            }
        }
        return new ReadsDone(r.required(rid, "request_id"), r.required(entity, "entity_id"));
    }

    static SetupDone setupDone(WireReader r) {
        r.startObject();
        String worker = null;
        String f;
        while ((f = r.nextField()) != null) {
            if (f.equals("worker_id")) {
                worker = r.string();
            } else {
                r.skip();
            }
        }
        return new SetupDone(r.required(worker, "worker_id"));
    }

    static WorkerGraphsDone workerGraphsDone(WireReader r) {
        r.startObject();
        String rid = null;
        List<Integer> ids = null;
        Boolean firstRank = null;
        Map<String, List<TensorPointerInfo>> persist = null;
        Map<String, Integer> tokenCounts = null;
        List<String> outputNames = null;
        Map<String, PublishedInfo> publish = null;
        String partition = null;
        boolean partitionDone = false;
        Map<String, Integer> consumed = null;
        Map<String, NestedLoopIndices> loopIndices = null;
        Map<NodeAndGraphWalk, GraphTiming> timings = null;
        List<RxInfo> rx = null;
        List<TxInfo> tx = null;
        String f;
        while ((f = r.nextField()) != null) {
            switch (f) {
                case "request_id": rid = r.string(); break;
                case "worker_graph_ids": ids = r.int32s(); break;
                case "is_first_tp_rank": firstRank = r.bool(); break;
                case "persist_signals": persist = r.object(x -> x.list(ModelDecoding::tensorPointerInfo)); break;
                case "new_token_counts": tokenCounts = r.object(WireReader::int32); break;
                case "output_signal_names": outputNames = r.strings(); break;
                case "resource_publish_info": publish = r.object(ModelDecoding::publishedInfo); break;
                case "partition_name": partition = r.string(); break;
                case "partition_done": partitionDone = or(r.bool(), false); break;
                case "stream_tokens_consumed": consumed = r.object(WireReader::int32); break;
                case "output_loop_indices": loopIndices = r.object(ModelDecoding::nestedLoopIndices); break;
                case "graph_timings": timings = graphTimings(r); break;
                case "rx_info": rx = r.list(ModelDecoding::rxInfo); break;
                case "tx_info": tx = r.list(ModelDecoding::txInfo); break;
                default: r.skip();
            }
        }
        return new WorkerGraphsDone(r.required(rid, "request_id"), r.required(ids, "worker_graph_ids"),
                r.required(firstRank, "is_first_tp_rank"), persist, tokenCounts, outputNames, publish,
                partition, partitionDone, consumed, loopIndices, timings, rx, tx);
    }
}
