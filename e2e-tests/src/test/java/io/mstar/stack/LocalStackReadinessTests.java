package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@Tag("kafka")
class LocalStackReadinessTests {

    private static final int WORKERS = 2;
    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(WORKERS);

    private final JsonMapper json = JsonMapper.builder().build();

    @Test
    void conductorIsReadyWithEveryConfiguredWorkerReportedReady() {
        ServiceProcess conductor = STACK.stack().conductor();

        JsonNode readiness = json.readTree(HttpProbe.body(conductor.readinessUrl(), HTTP_TIMEOUT));

        assertThat(readiness.path("status").asString()).isEqualTo("UP");
        JsonNode workers = readiness.path("components").path("workers").path("details");
        for (int n = 0; n < WORKERS; n++) {
            assertThat(workers.path("worker-" + n).path("state").asString())
                    .as("worker-%d in the conductor's readiness", n).isEqualTo("READY");
        }
        PrometheusScrape scrape = new PrometheusScrape(HttpProbe.body(conductor.prometheusUrl(), HTTP_TIMEOUT));
        assertThat(scrape.value("mstar_conductor_workers", Map.of("state", "ready"))).hasValue((double) WORKERS);
    }

    @Test
    void everyWorkerIsReadyAndHasAnnouncedSetupDone() {
        List<ServiceProcess> workers = STACK.stack().workers();
        assertThat(workers).hasSize(WORKERS);
        for (ServiceProcess worker : workers) {
            assertThat(HttpProbe.status(worker.readinessUrl(), HTTP_TIMEOUT)).as(worker.name()).isEqualTo(200);
            PrometheusScrape scrape = new PrometheusScrape(HttpProbe.body(worker.prometheusUrl(), HTTP_TIMEOUT));
            assertThat(scrape.value("mstar_worker_messages_sent_total", Map.of("message_type", "setup_done")))
                    .as("%s setup_done sent", worker.name())
                    .hasValueSatisfying(sent -> assertThat(sent).isGreaterThanOrEqualTo(1.0));
        }
    }

    @Test
    void everyServiceServesPrometheusWithItsRolesMeters() {
        LocalStack stack = STACK.stack();
        assertThat(new PrometheusScrape(HttpProbe.body(stack.conductor().prometheusUrl(), HTTP_TIMEOUT))
                .hasMetricStartingWith("mstar_conductor_messages_received_total")).isTrue();
        for (ServiceProcess worker : stack.workers()) {
            PrometheusScrape scrape = new PrometheusScrape(HttpProbe.body(worker.prometheusUrl(), HTTP_TIMEOUT));
            assertThat(scrape.hasMetricStartingWith("mstar_worker_messages_dead_lettered_total"))
                    .as(worker.name()).isTrue();
            assertThat(scrape.hasMetricStartingWith("jvm_memory_used_bytes")).as(worker.name()).isTrue();
        }
    }
}
