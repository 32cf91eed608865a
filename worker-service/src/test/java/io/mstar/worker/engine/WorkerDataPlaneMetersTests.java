package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.unit.DataSize;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.device.HostDevice;

/** The worker's data plane exports its arena occupancy under the names the dashboards use, and removes it on close. */
class WorkerDataPlaneMetersTests {

    @Test
    void arenaOccupancyIsScrapedWhileTheDataPlaneLives(@TempDir Path arenaDirectory) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        WorkerDataProperties settings = new WorkerDataProperties("127.0.0.1", 0, "127.0.0.1", arenaDirectory,
                DataSize.ofKilobytes(256), 2, DataSize.ofMegabytes(64));
        try (WorkerDataPlane data = new WorkerDataPlane(EntityId.worker(0), settings,
                new HostDevice(HostDevice.NAME, 1 << 20), registry)) {
            String scrape = registry.scrape();

            assertThat(scrape).contains("mstar_worker_arena_used_bytes 0.0", "mstar_worker_arena_reserved_bytes ",
                    "mstar_worker_arena_segments ", "mstar_worker_arena_spilled_files 0.0");
            assertThat(data.arenaOccupancy().liveSlots()).isZero();
        }
        assertThat(registry.scrape()).doesNotContain("mstar_worker_arena_");
        registry.close();
    }
}
