package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import io.mstar.model.CounterModel;
import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.FailRequests;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.counter.CounterHostKernels;

/** A kernel's per-request error fails that request alone; an exception fails its batch; the rest carry on. */
class KernelFailureTests {

    static List<String> failedIds(InProcessBroker broker) {
        List<String> ids = new ArrayList<>();
        synchronized (broker.sent) {
            broker.sent.stream().filter(s -> s.message() instanceof ConductorMessage m && m.body() instanceof FailRequests)
                    .forEach(s -> ids.addAll(((FailRequests) ((ConductorMessage) s.message()).body()).errors().keySet()));
        }
        return ids;
    }

    /** Every request id any FailRequests named, with the type it gave. */
    static Map<String, WorkerErrorType> failureTypes(InProcessBroker broker) {
        Map<String, WorkerErrorType> types = new java.util.HashMap<>();
        synchronized (broker.sent) {
            broker.sent.stream().filter(s -> s.message() instanceof ConductorMessage m && m.body() instanceof FailRequests)
                    .map(s -> (FailRequests) ((ConductorMessage) s.message()).body())
                    .forEach(f -> f.errors().keySet().forEach(id -> types.put(id, f.typeOf(id))));
        }
        return types;
    }

    @Nested
    class PerRequestError extends TwoWorkers {

        /** The request ids of every batch the step kernel got, in order. */
        final List<List<String>> stepBatches = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override
        ModelKernels kernels() {
            ModelKernels host = CounterHostKernels.kernels();
            NodeKernel step = host.kernel(CounterModel.STEP);
            return host.with(CounterModel.STEP, (device, batch) -> {
                stepBatches.add(batch.stream().map(NodeCall::requestId).toList());
                List<NodeResult> results = new ArrayList<>(step.forward(device, batch));
                for (int i = 0; i < batch.size(); i++) {
                    if (batch.get(i).requestId().startsWith("bad")) {
                        results.get(i).outputs().values().forEach(t -> device.free(t.buffer()));
                        results.set(i, NodeResult.failed(WorkerErrorType.KERNEL_FAILED,
                                "step refuses " + batch.get(i).requestId()));
                    }
                }
                return results;
            });
        }

        @Test
        void onlyTheBadRequestFailsAndTheOthersOfItsBatchGetTheirOutputs() throws Exception {
            List<String> ids = List.of("good-1", "bad-1", "good-2", "good-3");
            // The first decode signals (state is w1's own tensor, so no read) are held, then queued on w1 from its
            // own loop thread: the loop takes all four before its next turn and the step runs them as one batch.
            broker.hold(s -> s.to().equals(CounterConductor.W1.value()) && s.message() instanceof io.mstar.wire.WorkerMessage m
                    && m.body() instanceof io.mstar.wire.InputSignals in
                    && in.requestInfo().graphWalk().equals(CounterModel.DECODE));
            for (String id : ids) {
                conductor.start(id, new int[] {1, 1}, 3, null);
            }
            conductor.pumpUntil(() -> broker.heldCount() == ids.size(), TwoWorkers.TIMEOUT);
            w1.loop.ask(state -> {
                broker.release();
                return true;
            }).block(TwoWorkers.TIMEOUT);
            conductor.pumpUntilRemoved(TwoWorkers.TIMEOUT);

            assertThat(stepBatches.get(0)).as("the failing request shared its batch").containsExactlyInAnyOrderElementsOf(ids);
            assertThat(w1.registry.get("mstar.worker.batch.size").tag("node", CounterModel.STEP).summary().max())
                    .isEqualTo(ids.size());
            assertThat(stepBatches.stream().skip(1).flatMap(List::stream)).doesNotContain("bad-1");
            assertThat(failedIds(broker)).containsExactly("bad-1");
            assertThat(failureTypes(broker)).containsExactly(Map.entry("bad-1", WorkerErrorType.KERNEL_FAILED));
            assertThat(conductor.runs.get("bad-1").failure).isEqualTo("step refuses bad-1");
            assertThat(conductor.runs.get("bad-1").flat(CounterModel.TOKEN)).isEmpty();
            for (String id : List.of("good-1", "good-2", "good-3")) {
                assertThat(conductor.runs.get(id).failure).isNull();
                assertThat(conductor.runs.get(id).flat(CounterModel.TOKEN)).containsExactly(7, 8, 9);
                assertThat(conductor.runs.get(id).flat(CounterModel.TEXT)).containsExactly(70, 80, 90);
            }
        }
    }

    @Nested
    class BatchException extends TwoWorkers {

        @Override
        ModelKernels kernels() {
            ModelKernels host = CounterHostKernels.kernels();
            NodeKernel offset = host.kernel(CounterModel.OFFSET);
            return host.with(CounterModel.OFFSET, (device, batch) -> {
                if (batch.stream().map(NodeCall::requestId).anyMatch(id -> id.startsWith("explode"))) {
                    throw new IllegalStateException("offset kernel crashed");
                }
                return offset.forward(device, batch);
            });
        }

        @Test
        void anExceptionFailsEveryRequestOfItsBatchAndNoOther() throws Exception {
            List<String> ids = List.of("explode-1", "calm-1", "calm-2");
            ids.forEach(id -> conductor.start(id, new int[] {2}, 2, null));
            conductor.pumpUntilRemoved(TwoWorkers.TIMEOUT);

            List<String> failed = failedIds(broker);
            assertThat(failed).contains("explode-1").doesNotHaveDuplicates();
            // an unexpected exception in a kernel is the worker's bug, typed internal
            assertThat(failureTypes(broker).values()).containsOnly(WorkerErrorType.INTERNAL);
            for (String id : ids) {
                CounterConductor.Run run = conductor.runs.get(id);
                if (failed.contains(id)) {
                    assertThat(run.failure).contains("offset kernel crashed");
                } else {
                    // not batched with the crash: it ran to the end
                    assertThat(run.flat(CounterModel.TOKEN)).containsExactly(6, 7);
                }
            }
            assertThat(Map.copyOf(conductor.runs)).hasSize(3);
        }
    }

    @Nested
    class FatalDeviceError extends TwoWorkers {

        @Override
        ModelKernels kernels() {
            ModelKernels host = CounterHostKernels.kernels();
            return host.with(CounterModel.COUNT, (device, batch) -> {
                throw new DeviceException(DeviceException.Reason.values()[fatalReason()], device.name(), "sticky");
            });
        }

        private static int fatalReason() {
            for (DeviceException.Reason r : DeviceException.Reason.values()) {
                if (r.isFatal()) {
                    return r.ordinal();
                }
            }
            throw new AssertionError("no fatal device reason");
        }

        @Test
        void failsEveryRequestOnTheWorkerAndMarksTheDeviceUnhealthy() throws Exception {
            conductor.start("f-1", new int[] {1}, 2, null);
            conductor.start("f-2", new int[] {2}, 2, null);
            conductor.pumpUntilRemoved(TwoWorkers.TIMEOUT);

            assertThat(failedIds(broker)).containsExactlyInAnyOrder("f-1", "f-2");
            assertThat(failureTypes(broker).values()).containsOnly(WorkerErrorType.DEVICE_FATAL);
            assertThat(w1.loop.deviceHealthy()).isFalse();
            assertThat(w0.loop.deviceHealthy()).isTrue();
        }
    }
}
