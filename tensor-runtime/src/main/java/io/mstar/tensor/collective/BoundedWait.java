package io.mstar.tensor.collective;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * How a rank waits for its peers: spinning first (a tensor-parallel step's peers arrive within microseconds, and a
 * park costs tens of them), then parking with a pause that doubles up to a millisecond (a peer still computing costs
 * little CPU), until the condition holds, the wait is stopped, the caller is interrupted, or the deadline passes.
 * An {@link Collective#abort()} from another thread also unparks the waiter, so it ends at once.
 */
final class BoundedWait {

    enum Outcome {
        DONE,
        STOPPED,
        INTERRUPTED,
        TIMED_OUT
    }

    private static final long SPIN_NANOS = 50_000;
    private static final long FIRST_PARK_NANOS = 2_000;
    private static final long MAX_PARK_NANOS = 1_000_000;

    private BoundedWait() {
    }

    /**
     * Waits until {@code done}; {@code stopped} (abort, close) is asked before each look, and wins. Both are cheap
     * reads (a volatile field, a mapped word, an event query).
     */
    static Outcome until(BooleanSupplier done, BooleanSupplier stopped, long deadlineNanos) {
        long start = System.nanoTime();
        long pause = FIRST_PARK_NANOS;
        while (true) {
            if (stopped.getAsBoolean()) {
                return Outcome.STOPPED;
            }
            if (done.getAsBoolean()) {
                return Outcome.DONE;
            }
            if (Thread.currentThread().isInterrupted()) {
                return Outcome.INTERRUPTED;
            }
            long now = System.nanoTime();
            if (now - deadlineNanos >= 0) {
                return Outcome.TIMED_OUT;
            }
            if (now - start < SPIN_NANOS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(Math.min(pause, deadlineNanos - now));
                pause = Math.min(pause * 2, MAX_PARK_NANOS);
            }
        }
    }
}
