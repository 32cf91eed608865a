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
 */
@ConfigurationProperties("mstar.conductor")
public record ConductorProperties(@DefaultValue("6s") Duration workerLossTimeout) {

    public ConductorProperties {
        if (workerLossTimeout.isNegative() || workerLossTimeout.isZero()) {
            throw new IllegalArgumentException("mstar.conductor.worker-loss-timeout must be positive, was " + workerLossTimeout);
        }
    }
}
