package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.mstar.tensor.arena.ArenaMeters;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scrape shows the declared names (docs/architecture.md#metrics) and nothing is left after close. */
class TransportMeterNamesTests {

    @TempDir
    Path dir;

    @Test
    void scrapeHasTheDeclaredNamesAndCloseRemovesThem() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (ShmArena arena = new ShmArena(new ArenaSettings(dir, "worker-0", 1 << 20, 1, 256), ShmPlacementListener.NONE)) {
            arena.allocate(1, 1000);
            String scrape;
            try (TensorReader reader = new TensorReader(ReaderSettings.defaults("worker", Set.of()), new ArenaReader(dir), registry);
                 ArenaMeters arenaMeters = new ArenaMeters(arena, registry, "worker")) {
                scrape = registry.scrape();
            }
            assertThat(scrape)
                    .contains("mstar_worker_tensor_transfer_bytes_total{transport=\"http\"} 0.0")
                    .contains("mstar_worker_tensor_transfer_bytes_total{transport=\"shm\"} 0.0")
                    .contains("mstar_worker_tensor_transfer_seconds_count{transport=\"shm\"} 0")
                    .contains("mstar_worker_tensor_reads_in_flight{transport=\"http\"} 0.0")
                    .contains("mstar_worker_arena_reserved_bytes 1048576.0")
                    .contains("mstar_worker_arena_used_bytes 1024.0")
                    .contains("mstar_worker_arena_segments 1.0")
                    .contains("mstar_worker_arena_spilled_files 0.0");
            assertThat(registry.getMeters()).isEmpty();
        }
    }

    @Test
    void aFailedReadCountsByTransportAndReason() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (TransportMeters meters = new TransportMeters(registry, "conductor")) {
            meters.started(Transport.HTTP);
            meters.failed(Transport.HTTP, TensorTransportException.Reason.FREED);

            Counter failures = registry.get("mstar.conductor.tensor.read.failures")
                    .tags("transport", "http", "reason", "freed").counter();
            assertThat(failures.count()).isEqualTo(1);
            assertThat(failures.getId().getDescription()).isEqualTo("Tensor reads that failed, by reason");
            assertThat(failures.getId().getBaseUnit()).isNull();
            assertThat(meters.inFlight(Transport.HTTP)).isZero();
            assertThat(registry.scrape())
                    .contains("mstar_conductor_tensor_read_failures_total{reason=\"freed\",transport=\"http\"} 1.0");
        }
        assertThat(registry.getMeters()).isEmpty();
    }
}
