package io.mstar.conductor.health;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.KafkaAdmin;

import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.WorkerRegistry;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.KafkaReachability;

/**
 * Health of the conductor (docs/architecture.md#health). The readiness group ({@code application.yaml}) holds
 * {@code kafka} (the cluster answers and the inbox is positioned), {@code workers} (every configured worker
 * set up and not lost) and {@code lifecycleLoop}; liveness holds only {@code lifecycleLoop}, which depends on
 * nothing downstream: a broker outage makes the conductor unready, never restarted.
 */
@Configuration(proxyBeanMethods = false)
class ConductorHealthConfiguration {

    /** A loop turns every 100 ms when idle; this much silence means it is stuck. */
    static final Duration LOOP_STALL = Duration.ofSeconds(10);
    private static final Duration KAFKA_PROBE_INTERVAL = Duration.ofSeconds(2);

    @Bean(destroyMethod = "close")
    Admin kafkaProbeAdmin(KafkaAdmin kafkaAdmin) {
        return Admin.create(kafkaAdmin.getConfigurationProperties());
    }

    @Bean(initMethod = "start", destroyMethod = "close")
    KafkaReachability kafkaReachability(Admin kafkaProbeAdmin) {
        return new KafkaReachability(kafkaProbeAdmin, KAFKA_PROBE_INTERVAL, "mstar-conductor-kafka-probe");
    }

    @Bean
    HealthIndicator kafkaHealthIndicator(KafkaReachability reachability, InboxPosition position) {
        return () -> {
            Duration since = reachability.sinceLastSuccess();
            Health.Builder health = reachability.isReachable() && position.isPositioned() ? Health.up() : Health.down();
            health.withDetail("inboxPositioned", position.isPositioned());
            health.withDetail("lastClusterAnswerMs", since == null ? -1 : since.toMillis());
            if (reachability.lastError() != null) {
                health.withDetail("lastError", reachability.lastError());
            }
            return health.build();
        };
    }

    @Bean
    HealthIndicator workersHealthIndicator(LifecycleLoop loop) {
        return () -> {
            WorkerRegistry.Snapshot snapshot = loop.snapshot();
            if (snapshot == null) {
                return Health.down().withDetail("reason", "lifecycle loop has not started").build();
            }
            Map<String, Object> details = new LinkedHashMap<>();
            snapshot.workers().forEach((id, view) -> details.put(id.value(), Map.of(
                    "state", view.state().name(),
                    "silentForMs", view.silentFor() == null ? -1 : view.silentFor().toMillis())));
            return (snapshot.allReady() ? Health.up() : Health.down()).withDetails(details).build();
        };
    }

    @Bean
    HealthIndicator lifecycleLoopHealthIndicator(LifecycleLoop loop) {
        return () -> {
            Duration age = loop.heartbeatAge();
            boolean turning = loop.isRunning() && age.compareTo(LOOP_STALL) < 0;
            return (turning ? Health.up() : Health.down())
                    .withDetail("thread", LifecycleLoop.THREAD_NAME)
                    .withDetail("heartbeatAgeMs", age.toMillis())
                    .build();
        };
    }
}
