package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

/**
 * Live tensors, device bytes beyond the KV pools and resident tables, KV pages and arena bytes in use, and active requests on every
 * process of a stack, read from their Prometheus scrapes. An idle stack holds none: anything left is a leak (or
 * something freed late, which the wait absorbs).
 */
final class Leaks {

    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);

    private Leaks() {
    }

    static void awaitBaseline(LocalStack stack, Duration atMost) {
        await().atMost(atMost).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            for (ServiceProcess worker : stack.workers()) {
                if (!worker.process().isAlive()) {
                    continue;
                }
                PrometheusScrape scrape = new PrometheusScrape(HttpProbe.body(worker.prometheusUrl(), HTTP_TIMEOUT));
                assertThat(scrape.sum("mstar_worker_tensors_live")).as("%s live tensors", worker.name()).isZero();
                // KV-cache pools and resident tables are held for the worker's life: only bytes beyond them leak.
                assertThat(scrape.sum("mstar_worker_device_memory_used_bytes")).as("%s device bytes", worker.name())
                        .isEqualTo(scrape.sum("mstar_worker_kv_pool_bytes")
                                + scrape.sum("mstar_worker_resident_tables_bytes"));
                assertThat(scrape.sum("mstar_worker_kv_pages", java.util.Map.of("state", "used")))
                        .as("%s KV pages in use", worker.name()).isZero();
                assertThat(scrape.sum("mstar_worker_kv_pages", java.util.Map.of("state", "offloaded")))
                        .as("%s KV pages offloaded to the host pool", worker.name()).isZero();
                assertThat(scrape.sum("mstar_worker_arena_used_bytes")).as("%s arena bytes", worker.name()).isZero();
                assertThat(scrape.sum("mstar_worker_requests_active")).as("%s active requests", worker.name()).isZero();
            }
            PrometheusScrape conductor = new PrometheusScrape(HttpProbe.body(stack.conductor().prometheusUrl(), HTTP_TIMEOUT));
            assertThat(conductor.sum("mstar_conductor_tensors_live")).as("conductor live tensors").isZero();
            assertThat(conductor.sum("mstar_conductor_requests_in_flight")).as("conductor requests in flight").isZero();
        });
    }
}
