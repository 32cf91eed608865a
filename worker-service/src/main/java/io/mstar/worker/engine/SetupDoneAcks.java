package io.mstar.worker.engine;

import java.time.Duration;

/**
 * When the broker last acknowledged this worker's {@code SetupDone}: the worker's evidence that Kafka is
 * reachable and that the conductor can hear it. Written by the producer's I/O thread (the send callback),
 * read by health; a published value, not engine-loop state.
 */
public final class SetupDoneAcks {

    private volatile long lastAckNanos;
    private volatile boolean everAcked;
    private volatile String lastFailure;

    void acked() {
        lastAckNanos = System.nanoTime();
        everAcked = true;
        lastFailure = null;
    }

    void failed(Throwable failure) {
        lastFailure = failure.toString();
    }

    /** Time since the last acknowledgement, or null before the first. */
    public Duration sinceLastAck() {
        return everAcked ? Duration.ofNanos(System.nanoTime() - lastAckNanos) : null;
    }

    /** The last send failure since the last acknowledgement, or null. */
    public String lastFailure() {
        return lastFailure;
    }
}
