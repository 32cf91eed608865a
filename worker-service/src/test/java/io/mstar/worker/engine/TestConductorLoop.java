package io.mstar.worker.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.UnpersistTensors;
import io.mstar.wire.WorkerGraphsDone;
import io.mstar.wire.WorkerMessage;

/**
 * The model-independent half of every test conductor (docs/request-flow.md): it pumps the conductor's queue, hands
 * each ResultTensors and each WorkerGraphsDone of a running request to the harness's model policy, and ends every
 * request the same way: a DrainRequest to both workers (at the policy's end or on a FailRequests), then a
 * RemoveRequest to both once both ReadsDone are in. {@link CounterConductor}, {@link ToyConductor} and
 * {@link TtsHarness} compose it and keep only their model's policy. Runs on the test thread.
 */
final class TestConductorLoop<R extends TestConductorLoop.Request> {

    /** What the loop tracks of one request; each harness's run extends it with its model's progress. */
    abstract static class Request {
        final String id;
        /** The FailRequests error; null while none came. */
        String failure;
        /** DrainRequest sent: the policy sees no further report. */
        boolean draining;
        /** RemoveRequest sent: the request is gone from both workers and the conductor's store. */
        boolean removed;
        /** Entities whose ReadsDone came. */
        final Set<String> readsDone = new HashSet<>();
        /** Every report in arrival order, also those after the drain, for the tests to assert on. */
        final List<WorkerGraphsDone> reports = new ArrayList<>();

        Request(String id) {
            this.id = id;
        }

        /** The model's progress, for the message of a timeout. */
        abstract String progress();
    }

    /** What the policy keeps of an output; it reads it with {@link #readAndAcknowledge}. */
    interface Outputs<R> {
        void accept(R run, ResultTensors result) throws Exception;
    }

    /** How the harness reads one output tensor (int32 values or raw bytes), inline or from its producer. */
    interface Reader<V> {
        V read(ResultTensors result) throws Exception;
    }

    /** The workers of the harness (0 and 1 unless it says): each gets every DrainRequest and RemoveRequest. */
    private final List<EntityId> workers;
    private final Set<String> workerIds;

    private final InProcessBroker broker;
    private final TestConductor data;
    private final Map<String, R> runs;
    private final Outputs<R> onResult;
    private final BiConsumer<R, WorkerGraphsDone> onReport;

    /** {@code runs} is the harness's own map; {@code onReport} sees only the reports before the request's drain. */
    TestConductorLoop(InProcessBroker broker, TestConductor data, Map<String, R> runs, Outputs<R> onResult,
            BiConsumer<R, WorkerGraphsDone> onReport) {
        this(broker, data, runs, onResult, onReport, List.of(EntityId.worker(0), EntityId.worker(1)));
    }

    TestConductorLoop(InProcessBroker broker, TestConductor data, Map<String, R> runs, Outputs<R> onResult,
            BiConsumer<R, WorkerGraphsDone> onReport, List<EntityId> workers) {
        this.workers = List.copyOf(workers);
        this.workerIds = workers.stream().map(EntityId::value).collect(java.util.stream.Collectors.toSet());
        this.broker = broker;
        this.data = data;
        this.runs = runs;
        this.onResult = onResult;
        this.onReport = onReport;
    }

    /**
     * Reads an output, then acknowledges it with TensorReceived so the producer frees it; an inline output was freed
     * when it was sent, and is not acknowledged.
     */
    <V> V readAndAcknowledge(ResultTensors result, Reader<V> reader) throws Exception {
        V value = reader.read(result);
        acknowledge(broker, result);
        return value;
    }

    /**
     * TensorReceived to the producer of an output that was read, so it frees it; an inline output was freed when it
     * was sent, and is owed nothing.
     */
    static void acknowledge(InProcessBroker broker, ResultTensors result) {
        if (!result.inline()) {
            TensorPointerInfo info = result.graphEdge().tensorInfo().get(0);
            broker.fromConductor(EntityId.parse(info.sourceEntity()), WorkerMessage.of(
                    new TensorReceived(result.requestId(), Map.of(info.uuid(), 1), List.of())));
        }
    }

    /** Drain: the end of every request, and an abort when called before it finished. Once per request. */
    void drain(R run) {
        if (run.draining) {
            return;
        }
        run.draining = true;
        workers.forEach(w -> broker.fromConductor(w, WorkerMessage.of(new DrainRequest(run.id))));
    }

    /**
     * UnpersistTensors to a persisted signal's producer, giving back the {@code handouts} it was sent on as an input;
     * no-op for null, so a policy can pass a state it may not have yet.
     */
    void unpersist(TensorPointerInfo tensor, int handouts, String requestId) {
        if (tensor != null) {
            broker.fromConductor(EntityId.parse(tensor.sourceEntity()),
                    WorkerMessage.of(new UnpersistTensors(requestId, Map.of(tensor.uuid(), handouts))));
        }
    }

    /** Handles conductor messages until {@code done} holds. */
    void pumpUntil(BooleanSupplier done, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                StringBuilder b = new StringBuilder();
                runs.values().forEach(r -> b.append(r.id).append(' ').append(r.progress()).append(" failure=")
                        .append(r.failure).append(" readsDone=").append(r.readsDone).append(" removed=")
                        .append(r.removed).append("; "));
                throw new AssertionError("timed out; runs: " + b);
            }
            ConductorMessage message = broker.conductor.poll(50, TimeUnit.MILLISECONDS);
            if (message != null) {
                handle(message);
            }
        }
    }

    void pumpUntilRemoved(Duration timeout) throws Exception {
        pumpUntil(() -> runs.values().stream().allMatch(r -> r.removed), timeout);
    }

    private void handle(ConductorMessage message) throws Exception {
        Object body = message.body();
        if (body instanceof ResultTensors result) {
            onResult.accept(runs.get(result.requestId()), result);
        } else if (body instanceof WorkerGraphsDone done) {
            R run = runs.get(done.requestId());
            run.reports.add(done);
            if (!run.draining) {
                onReport.accept(run, done);
            }
        } else if (body instanceof FailRequests failed) {
            failed.errors().forEach((id, error) -> {
                R run = runs.get(id);
                run.failure = error;
                drain(run);
            });
        } else if (body instanceof ReadsDone readsDone) {
            R run = runs.get(readsDone.requestId());
            run.readsDone.add(readsDone.entityId());
            if (run.draining && !run.removed && run.readsDone.containsAll(workerIds)) {
                workers.forEach(w -> broker.fromConductor(w, WorkerMessage.of(new RemoveRequest(run.id))));
                data.removeRequest(run.id);
                run.removed = true;
            }
        }
    }
}
