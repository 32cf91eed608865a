package io.mstar.worker.engine;

import io.mstar.messaging.Incarnation;
import java.time.Duration;
import java.util.Objects;

/**
 * Whether the conductor that drives this worker's requests is still there (docs/architecture.md#restarts-and-ordering).
 * Every record the conductor sends proves it alive; its {@code ConductorHeartbeat} says how often to expect one. A new
 * incarnation, or silence for {@link #LOSS_INTERVALS} heartbeat intervals, means the requests here have nobody left to
 * finish or remove them. Owned by the engine loop.
 */
final class ConductorWatch {

    /** Heartbeats that may go missing before the conductor counts as gone (the conductor's own rule for workers). */
    static final int LOSS_INTERVALS = 3;

    enum Verdict {
        /** The conductor we knew, or the first we hear of. */
        SAME,
        /** Another incarnation: the one that drove the requests here is gone. */
        RESTARTED
    }

    private Incarnation incarnation;
    private long lastHeardNanos;
    private long lossTimeoutNanos;
    private boolean lostReported;

    /** @param interval the heartbeat interval assumed until the conductor states its own */
    ConductorWatch(Duration interval) {
        expectEvery(interval);
    }

    /** A record from the conductor's {@code incarnation} arrived at {@code now}. */
    Verdict heard(Incarnation incarnation, long now) {
        Objects.requireNonNull(incarnation, "incarnation");
        lastHeardNanos = now;
        lostReported = false;
        Incarnation known = this.incarnation;
        this.incarnation = incarnation;
        return known == null || known.equals(incarnation) ? Verdict.SAME : Verdict.RESTARTED;
    }

    /** The conductor's heartbeat interval, from its {@code ConductorHeartbeat}. */
    void expectEvery(Duration interval) {
        lossTimeoutNanos = interval.toNanos() * LOSS_INTERVALS;
    }

    /**
     * True once per silence: the conductor was heard from and has been silent for the loss timeout at {@code now}.
     * Hearing from it again re-arms the check.
     */
    boolean lostAt(long now) {
        if (incarnation == null || lostReported || now - lastHeardNanos < lossTimeoutNanos) {
            return false;
        }
        lostReported = true;
        return true;
    }

    Duration lossTimeout() {
        return Duration.ofNanos(lossTimeoutNanos);
    }
}
