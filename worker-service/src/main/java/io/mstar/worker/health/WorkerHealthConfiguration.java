package io.mstar.worker.health;

import java.time.Duration;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.mstar.messaging.InboxPosition;
import io.mstar.worker.engine.EngineLoop;
import io.mstar.worker.engine.SetupDoneAcks;
import io.mstar.worker.engine.WorkerProperties;

/**
 * Health of a worker (docs/architecture.md#health). Readiness ({@code application.yaml}) holds {@code setupDone}: the
 * inbox is positioned and the broker acknowledged a {@code SetupDone} within three intervals, which proves
 * both start-up and Kafka reachability; device health joins it with the device. Liveness holds only
 * {@code engineLoop}, which depends on nothing downstream.
 */
@Configuration(proxyBeanMethods = false)
class WorkerHealthConfiguration {

    /** A loop turns every 100 ms when idle (a send may block it up to 2 s); this much silence means stuck. */
    static final Duration LOOP_STALL = Duration.ofSeconds(10);

    @Bean
    HealthIndicator setupDoneHealthIndicator(InboxPosition position, SetupDoneAcks acks, WorkerProperties worker) {
        Duration fresh = worker.setupDoneInterval().multipliedBy(3);
        return () -> {
            Duration since = acks.sinceLastAck();
            boolean ready = position.isPositioned() && since != null && since.compareTo(fresh) <= 0;
            Health.Builder health = (ready ? Health.up() : Health.down())
                    .withDetail("inboxPositioned", position.isPositioned())
                    .withDetail("lastSetupDoneAckMs", since == null ? -1 : since.toMillis());
            if (acks.lastFailure() != null) {
                health.withDetail("lastFailure", acks.lastFailure());
            }
            return health.build();
        };
    }

    @Bean
    HealthIndicator engineLoopHealthIndicator(EngineLoop loop) {
        return () -> {
            Duration age = loop.heartbeatAge();
            boolean turning = loop.isRunning() && age.compareTo(LOOP_STALL) < 0;
            return (turning && loop.deviceHealthy() ? Health.up() : Health.down())
                    .withDetail("thread", loop.threadName())
                    .withDetail("heartbeatAgeMs", age.toMillis())
                    .withDetail("deviceHealthy", loop.deviceHealthy())
                    .build();
        };
    }

    @Bean
    HealthIndicator deviceHealthIndicator(EngineLoop loop) {
        return () -> (loop.deviceHealthy() ? Health.up() : Health.down())
                .withDetail("fatalError", !loop.deviceHealthy())
                .build();
    }
}
