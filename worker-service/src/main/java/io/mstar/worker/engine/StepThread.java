package io.mstar.worker.engine;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.messaging.EntityId;
import io.mstar.tensor.device.Device;

/**
 * The worker's step thread, {@code mstar-<worker>-step} (docs/worker-runtime.md#the-step-pipeline): runs one step at a
 * time on the device and hands each back to the engine loop as a command. A step speculated on the running one
 * ({@link #speculate}) starts the moment the running one completes, with its outputs threaded in, before the loop has
 * even seen them; the loop post-processes the first while the second runs.
 *
 * <p>The thread touches only the step it runs and the device; the running and queued steps are this class's, under
 * its lock, and everything else stays the loop's.
 */
final class StepThread implements StepExecutor {

    private static final Logger log = LoggerFactory.getLogger(StepThread.class);
    private static final long CLOSE_WAIT_SECONDS = 30;

    private final Device device;
    private final Consumer<Runnable> toLoop;
    private final Consumer<Step> completed;
    private final ExecutorService thread;
    private final Object lock = new Object();
    /** The step the thread runs or is about to run; null when idle. Guarded by {@link #lock}. */
    private Step running;
    /** The step speculated on {@link #running}. Guarded by {@link #lock}. */
    private Step queued;

    /**
     * @param toLoop    runs a command on the engine loop
     * @param completed what the loop does with a completed step (run there)
     */
    StepThread(EntityId self, Device device, Consumer<Runnable> toLoop, Consumer<Step> completed) {
        this.device = device;
        this.toLoop = toLoop;
        this.completed = completed;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "mstar-" + self.value() + "-step");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void submit(Step step) {
        synchronized (lock) {
            if (running != null) {
                throw new IllegalStateException("step " + step.seq + " submitted while step " + running.seq + " runs");
            }
            running = step;
        }
        thread.execute(() -> runFrom(step));
    }

    @Override
    public boolean speculate(Step on, Step next) {
        synchronized (lock) {
            if (running != on || queued != null) {
                return false;
            }
            queued = next;
            return true;
        }
    }

    @Override
    public boolean withdraw(Step on, Step next) {
        synchronized (lock) {
            if (running != on || queued != next) {
                return false;
            }
            queued = null;
            return true;
        }
    }

    private void runFrom(Step first) {
        Step step = first;
        while (step != null) {
            StepExecutor.run(device, step);
            Step next;
            synchronized (lock) {
                next = queued;
                queued = null;
                if (next != null) {
                    next.threadIn(step);
                }
                running = next != null && !next.voided ? next : null;
            }
            step.next = next;
            Step done = step;
            toLoop.accept(() -> completed.accept(done));
            step = next != null && !next.voided ? next : null;
        }
    }

    @Override
    public void close() {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
                log.error("the step thread did not finish its step within {} s; its buffers may outlive the engine",
                        CLOSE_WAIT_SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
