package io.mstar.wire;

import java.util.Objects;

/**
 * A worker announcing it is set up and ready. Repeated every few seconds, it doubles as the
 * heartbeat; after a restart it tells the conductor every request the worker held is gone.
 *
 * @param workerId the worker's entity id
 */
public record SetupDone(String workerId) implements ConductorMessageBody {

    public SetupDone {
        Objects.requireNonNull(workerId, "worker_id");
    }
}
