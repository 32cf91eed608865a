package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

class ControlPlaneMetersTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void namesCarryTheRole() {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.WORKER);
        meters.sent("setup_done");
        meters.received("abort_request", 1_000, 3_000_001_000L);

        assertThat(registry.get("mstar.worker.messages.sent").tag("message_type", "setup_done").counter().count()).isEqualTo(1);
        assertThat(registry.get("mstar.worker.messages.received").tag("message_type", "abort_request").counter().count()).isEqualTo(1);
        assertThat(registry.get("mstar.worker.message.latency").tag("message_type", "abort_request").timer()
                .totalTime(TimeUnit.SECONDS)).isEqualTo(3.0);
    }

    @Test
    void everyDeadLetterReasonStartsAtZeroAndCountsSeparately() {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.CONDUCTOR);
        meters.deadLettered(DeadLetterReason.CONFIG_MISMATCH);

        assertThat(registry.get("mstar.conductor.messages.dead.lettered").counters()).hasSize(DeadLetterReason.values().length);
        assertThat(registry.get("mstar.conductor.messages.dead.lettered").tag("reason", "config_mismatch").counter().count()).isEqualTo(1);
        assertThat(registry.get("mstar.conductor.messages.dead.lettered").tag("reason", "malformed_json").counter().count()).isZero();
    }

    @Test
    void declaredMessageTypesExistAtZeroBeforeTheFirstMessage() {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.CONDUCTOR);
        meters.declareMessageTypes(List.of("new_request", "drain_request"), List.of("setup_done"));

        assertThat(registry.get("mstar.conductor.messages.sent").counters()).hasSize(2)
                .allSatisfy(c -> assertThat(c.count()).isZero());
        assertThat(registry.get("mstar.conductor.messages.received").tag("message_type", "setup_done").counter().count()).isZero();
        assertThat(registry.get("mstar.conductor.message.latency").tag("message_type", "setup_done").timer().count()).isZero();
    }

    @Test
    void negativeLatencyFromClockSkewRecordsZero() {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.WORKER);
        meters.received("setup_done", 5_000, 1_000);

        assertThat(registry.get("mstar.worker.message.latency").timer().count()).isEqualTo(1);
        assertThat(registry.get("mstar.worker.message.latency").timer().totalTime(TimeUnit.NANOSECONDS)).isZero();
    }

    @Test
    void consumerLagIsUnknownUntilBoundThenTheLargestClientLag() {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.WORKER);
        assertThat(registry.get("mstar.worker.kafka.consumer.lag").gauge().value()).isNaN();

        meters.bindConsumerLag(() -> List.of(Map.of(lagMetric(Map.of()), metric(4.0), lagMetric(Map.of("topic", "t")), metric(99.0)),
                Map.of(lagMetric(Map.of()), metric(7.0))));

        assertThat(registry.get("mstar.worker.kafka.consumer.lag").gauge().value()).isEqualTo(7.0);
    }

    @Test
    void lagBeforeTheFirstFetchIsUnknownNotNegative() {
        assertThat(ControlPlaneMeters.recordsLagMax(Map.of(lagMetric(Map.of()), metric(Double.NEGATIVE_INFINITY)))).isNaN();
        assertThat(ControlPlaneMeters.recordsLagMax(Map.of())).isNaN();
    }

    @Test
    void closeRemovesEveryMeterItRegistered() {
        ControlPlaneMeters meters = new ControlPlaneMeters(registry, ControlPlaneMeters.Role.WORKER);
        meters.sent("setup_done");
        meters.received("setup_done", 0, 0);
        meters.close();

        assertThat(registry.getMeters()).isEmpty();
    }

    private static MetricName lagMetric(Map<String, String> tags) {
        return new MetricName("records-lag-max", "consumer-fetch-manager-metrics", "", tags);
    }

    private static Metric metric(double value) {
        return new Metric() {
            @Override
            public MetricName metricName() {
                return null;
            }

            @Override
            public Object metricValue() {
                return value;
            }
        };
    }
}
