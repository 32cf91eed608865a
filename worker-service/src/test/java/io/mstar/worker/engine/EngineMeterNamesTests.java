package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * Every declared engine meter shows up in the scrape under the name operators query, bounded tags only
 * (docs/architecture.md#meters-declared-once-per-role).
 */
class EngineMeterNamesTests {

    @Test
    void theScrapeHoldsEveryDeclaredEngineMeter() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EngineMeters meters = new EngineMeters(registry, () -> new EngineSnapshot(3, 1, 2, 0, 0, 0,
                io.mstar.tensor.TensorStoreSnapshot.EMPTY));
        meters.batch("counter", "step", "decode", 4, 0.002);
        meters.ended(RequestEnd.COMPLETED);
        meters.dropped(EngineMeters.DROPPED_LATE);
        meters.transitionWait("counter", "decode", 3_000_000L);
        meters.loopQueueWait(80_000L);
        meters.lockstepAnomaly(EngineMeters.SKIPPED_CALL, 2);

        String scrape = registry.scrape();
        for (EngineMeters.Definition d : EngineMeters.Definition.values()) {
            assertThat(scrape).as(d.name()).containsPattern("(?m)^" + d.declaration().scrapedSample() + "[{ ]");
        }
        assertThat(scrape).contains("mstar_worker_batches_total{model=\"counter\",node=\"step\",walk=\"decode\"} 1.0");
        assertThat(scrape).contains("mstar_worker_step_seconds_count{model=\"counter\",node=\"step\",walk=\"decode\"} 1");
        assertThat(scrape).contains("mstar_worker_step_seconds_bucket{model=\"counter\",node=\"step\",walk=\"decode\",le=\"0.001\"} 0");
        assertThat(scrape).contains("mstar_worker_step_seconds_bucket{model=\"counter\",node=\"step\",walk=\"decode\",le=\"0.0025\"} 1");
        assertThat(scrape.lines().filter(l -> l.startsWith("mstar_worker_step_seconds_bucket{"))).hasSize(16);
        assertThat(scrape).contains("mstar_worker_batch_size_sum{model=\"counter\",node=\"step\"} 4.0");
        assertThat(scrape).contains("mstar_worker_transition_wait_seconds_count{model=\"counter\",walk=\"decode\"} 1");
        assertThat(scrape).contains("mstar_worker_transition_wait_seconds_sum{model=\"counter\",walk=\"decode\"} 0.003");
        assertThat(scrape).contains("mstar_worker_loop_queue_wait_seconds_bucket{le=\"5.0E-5\"} 0");
        assertThat(scrape).contains("mstar_worker_loop_queue_wait_seconds_bucket{le=\"1.0E-4\"} 1");
        assertThat(scrape).contains("mstar_worker_requests_active 3.0");
        assertThat(scrape).contains("mstar_worker_requests_ended_total{cause=\"completed\"} 1.0");
        assertThat(scrape).contains("mstar_worker_requests_ended_total{cause=\"aborted\"} 0.0");
        assertThat(scrape).contains("mstar_worker_messages_dropped_total{reason=\"late\"} 1.0");
        assertThat(scrape).contains("mstar_worker_messages_dropped_total{reason=\"stale_ack\"} 0.0");
        assertThat(scrape).contains("mstar_worker_lockstep_anomalies_total{kind=\"skipped_call\"} 2.0");
        assertThat(scrape).contains("mstar_worker_lockstep_anomalies_total{kind=\"resident_mismatch\"} 0.0");

        meters.close();
        assertThat(registry.getMeters()).isEmpty();
    }
}
