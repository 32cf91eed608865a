package io.mstar.wire;

/**
 * The conductor announcing it is alive, to every worker every {@code intervalMs}. Not in the reference
 * protocol: there a worker shares the conductor's fate. Here a worker that hears nothing from the
 * conductor for a few intervals, or hears a new conductor incarnation, drops the requests the old one
 * drove instead of holding their tensors forever.
 *
 * @param intervalMs how often the conductor sends it; a worker's loss timeout is a multiple of it
 */
public record ConductorHeartbeat(long intervalMs) implements WorkerMessageBody {

    public ConductorHeartbeat {
        if (intervalMs <= 0) {
            throw new IllegalArgumentException("interval_ms must be positive, was " + intervalMs);
        }
    }
}
