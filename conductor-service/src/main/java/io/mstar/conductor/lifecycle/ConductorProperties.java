package io.mstar.conductor.lifecycle;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Conductor settings ({@code mstar.conductor.*}).
 *
 * @param workerLossTimeout how long a worker may stay silent before it is LOST (default 6s). Workers repeat
 *     {@code SetupDone} every {@code mstar.worker.setup-done-interval} (2s), so the default tolerates two
 *     missed heartbeats; shorter fails requests sooner on a real loss but risks declaring a worker lost
 *     during a long GC pause or a broker leader election.
 * @param drainTimeout how long an ended request waits for {@code ReadsDone} from its workers (and for the
 *     conductor's own output reads) before {@code RemoveRequest} is sent anyway (default 10s; counted in
 *     {@code mstar_conductor_drain_timeouts_total}). Shorter frees worker memory sooner after a stuck read; too
 *     short removes tensors a peer is still reading, which that peer then sees as a failed read.
 * @param heartbeatInterval how often every worker is sent a {@code ConductorHeartbeat} (default 2s). A worker that
 *     hears nothing from the conductor for three intervals, or hears a new incarnation, drops the requests it holds
 *     for the conductor that is gone.
 */
@ConfigurationProperties("mstar.conductor")
public record ConductorProperties(@DefaultValue("6s") Duration workerLossTimeout,
        @DefaultValue("10s") Duration drainTimeout, @DefaultValue("2s") Duration heartbeatInterval) {

    public ConductorProperties {
        if (workerLossTimeout.isNegative() || workerLossTimeout.isZero()) {
            throw new IllegalArgumentException("mstar.conductor.worker-loss-timeout must be positive, was " + workerLossTimeout);
        }
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()) {
            throw new IllegalArgumentException("mstar.conductor.heartbeat-interval must be positive, was " + heartbeatInterval);
        }
        if (drainTimeout.isNegative() || drainTimeout.isZero()) {
            throw new IllegalArgumentException("mstar.conductor.drain-timeout must be positive, was " + drainTimeout);
        }
    }
}
