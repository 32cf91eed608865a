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

import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Random instances of every body, for round-trip tests: unicode strings (including astral-plane
 * characters and JSON escapes), nulls where nullable, empty and large collections, and the
 * extremes of every integer type.
 */
final class RandomMessages {

    private static final String[] ALPHABETS = {
        "abcdefghijklmnopqrstuvwxyz0123456789-_:.",
        "\"\\/\b\f\n\r\t\u0000\u001f\u007f",
        "äöüßéèñçøåÆ€£¥",
        "日本語中文한국어",
        "\uD83D\uDE00\uD83D\uDC4D\uD834\uDD1E",
    };

    private final Random rnd;
    /** Large collections left for the instance being built: one, so nesting cannot explode. */
    private int largeLeft;

    RandomMessages(long seed) {
        this.rnd = new Random(seed);
    }

    WorkerMessageBody workerBody(WorkerMessageType type) {
        largeLeft = 1;
        switch (type) {
            case COLLECTIVE_BOOTSTRAP:
                return new CollectiveBootstrap(str(), anyLong(), base64(CollectiveBootstrap.NCCL_UNIQUE_ID_BYTES));
            case CONDUCTOR_HEARTBEAT: return new ConductorHeartbeat(1 + rnd.nextInt(60_000));
            case DRAIN_REQUEST: {
                int o = rnd.nextInt(RequestOutcome.values().length + 1);
                return new DrainRequest(str(), source(), o == 0 ? null : RequestOutcome.values()[o - 1]);
            }
            case INPUT_SIGNALS: {
                List<GraphEdge> inputs = list(this::edge, 4);
                return new InputSignals(str(), inputs, info(), str(), set(), inline(inputs));
            }
            case NEW_REQUEST: {
                List<GraphEdge> inputs = list(this::edge, 3);
                return new NewRequest(str(), list(this::anyInt, 6), map(this::anyInt, () -> list(this::str, 3), 4),
                        inputs, info(), inline(inputs));
            }
            case REMOVE_REQUEST: return new RemoveRequest(str(), source(), anyLong());
            case SCHEDULE_TP: {
                OffloadDelta d = OffloadDelta.newDelta();
                int n = size(70);
                for (int i = 0; i < n; i++) {
                    if (rnd.nextBoolean()) {
                        d.addOffloaded(str());
                    } else {
                        d.addReloaded(str());
                    }
                }
                return new ScheduleTPNode(str(), str(), list(this::str, 8), rnd.nextBoolean(), anyLong(), anyLong(),
                        rnd.nextInt(5) == 0 ? null : d);
            }
            case STOP_LOOPS: return new StopLoops(str(), set(), str(), strMap(this::loops, 3));
            case TENSOR_RECEIVED:
                return new TensorReceived(str(), map(this::anyLong, this::anyInt, 20), list(this::anyLong, 20));
            case TP_NO_SPEC: return new TPNoSpeculation(str(), str(), anyLong());
            case UNPERSIST_TENSORS: return new UnpersistTensors(str(), map(this::anyLong, this::anyInt, 20));
            default: throw new IllegalStateException(type.toString());
        }
    }

    ConductorMessageBody conductorBody(ConductorMessageType type) {
        largeLeft = 1;
        switch (type) {
            case ABORT_REQUEST: return new AbortRequest(str());
            case FAIL_REQUESTS: {
                Map<String, String> errors = strMap(this::str, 5);
                Map<String, WorkerErrorType> types = new java.util.TreeMap<>();
                WorkerErrorType[] known = WorkerErrorType.values();
                errors.keySet().forEach(id -> {
                    if (rnd.nextBoolean()) {
                        types.put(id, known[rnd.nextInt(known.length)]);
                    }
                });
                return new FailRequests(errors, types);
            }
            case NEW_REQUEST:
                return new NewRequestConductor(str(), strMap(() -> list(this::tensor, 3), 3), list(this::str, 3),
                        list(this::str, 3), strMap(() -> list(() -> jsonObject(2), 3), 3), jsonObject(3));
            case READS_DONE: return new ReadsDone(str(), str());
            case RESULT_TENSORS: {
                GraphEdge edge = edge();
                List<String> inline = new ArrayList<>();
                if (rnd.nextBoolean()) {
                    for (int i = 0; i < edge.tensorInfo().size(); i++) {
                        inline.add(base64(rnd.nextInt(64)));
                    }
                }
                return new ResultTensors(str(), str(), edge, loops(), strMap(this::str, 3), inline);
            }
            case SETUP_DONE: return new SetupDone(str());
            case WORKER_GRAPHS_DONE: {
                Map<NodeAndGraphWalk, GraphTiming> timings = new HashMap<>();
                int n = size(6);
                for (int i = 0; i < n; i++) {
                    GraphTiming t = new GraphTiming(str(), str(), anyLong(), dbl(), dbl(), dbl(), dbl());
                    timings.put(t.key(), t);
                }
                return new WorkerGraphsDone(str(), list(this::anyInt, 5), rnd.nextBoolean(),
                        strMap(() -> list(this::tensor, 4), 8), strMap(this::anyInt, 3), list(this::str, 4),
                        strMap(this::published, 2), str(), rnd.nextBoolean(), strMap(this::anyInt, 3),
                        strMap(this::loops, 3), timings,
                        list(() -> new RxInfo(str(), str(), str(), anyLong(), anyLong(), dbl()), 4),
                        list(() -> new TxInfo(str(), str(), anyLong(), anyLong(), dbl()), 4));
            }
            default: throw new IllegalStateException(type.toString());
        }
    }

    // ---- value types ------------------------------------------------------------------------

    TensorPointerInfo tensor() {
        return new TensorPointerInfo(anyLong(), list(this::anyLong, 5), list(this::anyLong, 5), str(), anyLong(),
                anyLong(), anyLong(), str(), str(), anyInt(), anyInt(), nullable(this::str), anyLong(),
                nullable(this::str), nullable(this::str));
    }

    GraphEdge edge() {
        return new GraphEdge(str(), str(), list(this::tensor, 3), rnd.nextBoolean(), rnd.nextBoolean(),
                rnd.nextBoolean(), nullable(this::str), str(), rnd.nextBoolean(), rnd.nextBoolean(), anyInt(),
                nullable(this::anyInt));
    }

    NestedLoopIndices loops() {
        return new NestedLoopIndices(list(this::str, 4), strMap(this::anyInt, 4), anyInt());
    }

    SamplingConfig sampling() {
        return new SamplingConfig(nullable(this::anyInt), dbl(), anyInt(), dbl(), rnd.nextBoolean(), dbl(), anyLong());
    }

    PublishedInfo published() {
        List<PublishedSequence> seqs = new ArrayList<>();
        int n = size(4);
        for (int i = 0; i < n; i++) {
            seqs.add(new PublishedSequence(i, str(), anyInt(), list(this::anyInt, 10)));
        }
        return new PublishedInfo(str(), anyInt(), seqs);
    }

    CurrentForwardPassInfo info() {
        return new CurrentForwardPassInfo(str(), str(), rnd.nextBoolean(), anyInt(), anyLong(), anyInt(),
                strMap(() -> new MultiSamplingConfig(rnd.nextInt(4) == 0 ? null : sampling(), strMap(this::sampling, 2)), 3),
                strMap(this::str, 3), strMap(this::published, 2), nullable(this::str), strMap(this::loops, 2),
                strMap(this::anyInt, 3));
    }

    Map<String, Object> jsonObject(int depth) {
        Map<String, Object> m = new LinkedHashMap<>();
        int n = size(4);
        for (int i = 0; i < n; i++) {
            m.put(str(), jsonValue(depth));
        }
        return m;
    }

    private Object jsonValue(int depth) {
        switch (rnd.nextInt(depth > 0 ? 8 : 6)) {
            case 0: return null;
            case 1: return str();
            case 2: return rnd.nextBoolean();
            case 3: return anyLong();
            case 4: return rnd.nextInt(1000);  // an Integer: normalized to Long
            case 5: return dbl();
            case 6: return list(() -> jsonValue(depth - 1), 4);
            default: return jsonObject(depth - 1);
        }
    }

    // ---- primitives -------------------------------------------------------------------------

    String str() {
        int len = rnd.nextInt(40) == 0 ? rnd.nextInt(300) : rnd.nextInt(12);
        StringBuilder sb = new StringBuilder(len);
        String alphabet = ALPHABETS[rnd.nextInt(3) == 0 ? rnd.nextInt(ALPHABETS.length) : 0];
        while (sb.length() < len) {
            int i = rnd.nextInt(alphabet.length());
            char c = alphabet.charAt(i);
            if (Character.isHighSurrogate(c)) {
                sb.append(c).append(alphabet.charAt(i + 1));
            } else if (!Character.isLowSurrogate(c)) {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    long anyLong() {
        switch (rnd.nextInt(6)) {
            case 0: return Long.MAX_VALUE;
            case 1: return Long.MIN_VALUE;
            case 2: return 0L;
            case 3: return rnd.nextInt(1000);
            default: return rnd.nextLong();
        }
    }

    int anyInt() {
        switch (rnd.nextInt(6)) {
            case 0: return Integer.MAX_VALUE;
            case 1: return Integer.MIN_VALUE;
            case 2: return -1;
            case 3: return rnd.nextInt(1000);
            default: return rnd.nextInt();
        }
    }

    double dbl() {
        switch (rnd.nextInt(7)) {
            case 0: return 0.0;
            case 1: return -0.0;
            case 2: return Double.MAX_VALUE;
            case 3: return Double.MIN_VALUE;
            case 4: return rnd.nextInt(100);
            default: return (rnd.nextDouble() - 0.5) * Math.pow(10, rnd.nextInt(40) - 20);
        }
    }

    MessageSource source() {
        int i = rnd.nextInt(MessageSource.values().length + 1);
        return i == MessageSource.values().length ? null : MessageSource.values()[i];
    }

    private <T> T nullable(Supplier<T> s) {
        return rnd.nextInt(3) == 0 ? null : s.get();
    }

    /** Mostly small, sometimes empty, now and then large. */
    private int size(int typical) {
        int roll = rnd.nextInt(20);
        if (roll == 0) {
            return 0;
        }
        if (roll == 1 && largeLeft > 0) {
            largeLeft--;
            return typical * 10;
        }
        return rnd.nextInt(typical + 1);
    }

    private <T> List<T> list(Supplier<T> s, int typical) {
        int n = size(typical);
        List<T> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(s.get());
        }
        return out;
    }

    private Set<String> set() {
        return new HashSet<>(list(this::str, 5));
    }

    private <V> Map<String, V> strMap(Supplier<V> value, int typical) {
        return map(this::str, value, typical);
    }

    private <K, V> Map<K, V> map(Supplier<K> key, Supplier<V> value, int typical) {
        Map<K, V> out = new HashMap<>();
        int n = size(typical);
        for (int i = 0; i < n; i++) {
            out.put(key.get(), value.get());
        }
        return out;
    }

    /** Half the time none, else an entry per descriptor of {@code edges}. */
    private List<String> inline(List<GraphEdge> edges) {
        List<String> inline = new ArrayList<>();
        if (rnd.nextBoolean()) {
            edges.forEach(edge -> edge.tensorInfo().forEach(d -> inline.add(base64(rnd.nextInt(64)))));
        }
        return inline;
    }

    private String base64(int length) {
        byte[] bytes = new byte[length];
        rnd.nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }
}
