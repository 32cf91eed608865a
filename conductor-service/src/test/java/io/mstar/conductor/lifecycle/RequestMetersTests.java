package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.mstar.wire.RequestOutcome;

/** The latency timers the dashboards and the SLO alert take quantiles of publish a few fixed Prometheus histogram buckets. */
class RequestMetersTests {

    @Test
    void latencyTimersPublishBoundedHistogramBuckets() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (RequestMeters meters = new RequestMeters(registry)) {
            meters.ended("counter", RequestOutcome.COMPLETED, null, Duration.ofMillis(40));
            meters.queued("counter", Duration.ofMillis(3));
            meters.firstChunk("counter", Duration.ofMillis(20));
            meters.interChunk("counter", Duration.ofMillis(2));

            String scrape = registry.scrape();

            for (String name : List.of("mstar_conductor_request_latency_seconds", "mstar_conductor_request_queue_seconds",
                    "mstar_conductor_request_first_chunk_seconds", "mstar_conductor_request_inter_chunk_seconds")) {
                List<String> buckets = scrape.lines().filter(l -> l.startsWith(name + "_bucket{")).toList();
                assertThat(buckets).as(name).hasSizeBetween(10, 20)
                        .anySatisfy(l -> assertThat(l).contains("le=\"+Inf\"").endsWith(" 1"));
            }
            // 40 ms is counted from the 50 ms bucket on.
            assertThat(scrape.lines().filter(l -> l.startsWith("mstar_conductor_request_latency_seconds_bucket{"))
                    .findFirst()).hasValueSatisfying(l -> assertThat(l).endsWith(" 0"));
            assertThat(scrape).contains("mstar_conductor_request_latency_seconds_bucket{model=\"counter\",status=\"completed\",le=\"0.025\"} 0");
            assertThat(scrape).contains("mstar_conductor_request_latency_seconds_bucket{model=\"counter\",status=\"completed\",le=\"0.05\"} 1");
        } finally {
            registry.close();
        }
    }
}
