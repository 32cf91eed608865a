package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.CudaEvent;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeResult;

/**
 * Runs steps on the device and hands each back to the engine loop once its device work completed
 * (docs/worker-runtime.md#the-step-pipeline). {@link #synchronous} runs a step on the loop itself (the behaviour kept for
 * comparison); {@link StepThread} runs it on the worker's step thread while the loop goes on with control work.
 */
interface StepExecutor extends AutoCloseable {

    /** Runs {@code step}; it comes back to the loop through the completion the executor was made with. */
    void submit(Step step);

    /**
     * Queues {@code next} to run as soon as {@code running} completes, with {@code running}'s outputs threaded in.
     * False when that can no longer happen ({@code running} completed already, or this executor does not speculate):
     * the loop then takes {@code next} back.
     */
    boolean speculate(Step running, Step next);

    /**
     * Takes back {@code queued}, speculated on {@code running}, if it has not started: true when it will not run (the
     * loop then owns it again), false when it started already or was never queued.
     */
    boolean withdraw(Step running, Step queued);

    /** Stops taking steps and waits, bounded, for the one running. */
    @Override
    void close();

    /** Steps run on the calling thread (the loop), each handed to {@code completed} before {@link #submit} returns. */
    static StepExecutor synchronous(Device device, Consumer<Step> completed) {
        return new StepExecutor() {
            @Override
            public void submit(Step step) {
                run(device, step);
                completed.accept(step);
            }

            @Override
            public boolean speculate(Step running, Step next) {
                return false;
            }

            @Override
            public boolean withdraw(Step running, Step queued) {
                return false;
            }

            @Override
            public void close() {
            }
        };
    }

    /**
     * Runs the kernel on the step's calls but those refused pages or dropped, then waits for the device work it
     * issued: on CUDA an event recorded on the device's stream after the launches, so descriptors of the outputs are
     * published only after the bytes are there. Never throws: the outcome is in the step.
     */
    static void run(Device device, Step step) {
        long start = System.nanoTime();
        NodeResult[] results = step.refused.clone();
        List<Integer> admitted = new ArrayList<>();
        List<NodeCall> calls = new ArrayList<>();
        List<KvStep> kv = new ArrayList<>();
        for (int i = 0; i < step.calls.size(); i++) {
            if (step.dropped[i]) {
                continue;
            }
            if (results[i] != null) {
                continue; // refused pages when the step was built
            }
            admitted.add(i);
            calls.add(step.calls.get(i));
            if (step.kv != null) {
                kv.add(step.kv.get(i));
            }
        }
        try {
            if (!calls.isEmpty()) {
                List<NodeResult> out = step.kernel instanceof KvCacheKernel kvKernel
                        ? kvKernel.forward(device, calls, kv)
                        : step.kernel.forward(device, calls);
                if (out.size() != calls.size()) {
                    throw new EngineException(EngineException.Reason.KERNEL_FAILED, "kernel of " + step.key.node()
                            + " answered " + out.size() + " results for " + calls.size() + " calls");
                }
                awaitIssued(device);
                for (int j = 0; j < out.size(); j++) {
                    results[admitted.get(j)] = out.get(j);
                }
            }
            step.results = results;
        } catch (RuntimeException e) {
            step.error = e;
        }
        step.nanos = System.nanoTime() - start;
    }

    /** Waits for the work issued on the device so far; a host device has none in flight. */
    private static void awaitIssued(Device device) {
        if (device instanceof CudaDevice cuda) {
            try (CudaEvent issued = cuda.recordEvent()) {
                issued.synchronize();
            }
        }
    }
}
