package io.mstar.conductor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.WorkerLifecycle;
import io.mstar.controlplane.ControlRecordsExtension;
import io.mstar.deployment.ConfigDigest;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.ControlPlaneScrape;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Topics;
import io.mstar.wire.AbortRequest;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.SetupDone;
import io.mstar.wire.WireCodec;

/**
 * The conductor against a real in-JVM broker over real HTTP: readiness follows the configured workers'
 * SetupDone heartbeats, and refused records are dead-lettered while consumption carries on.
 */
@Tag("kafka")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
        "mstar.conductor.worker-loss-timeout=2s", "mstar.conductor.data.port=0"})
@AutoConfigureWebTestClient
@EmbeddedKafka(partitions = 1)
class ConductorControlPlaneTests {

    private static final ConfigDigest DIGEST = DeploymentConfig.loadDefault().digest();
    private static final Topics TOPICS = Topics.withDefaultPrefix();

    @Autowired
    WebTestClient web;
    @Autowired
    LifecycleLoop loop;

    private final WireCodec codec = new WireCodec();

    @RegisterExtension
    final ControlRecordsExtension records = new ControlRecordsExtension();

    @Test
    void readinessIsDownUntilEveryConfiguredWorkerReportsThenFollowsTheirHeartbeats() throws Exception {
        readiness().expectStatus().isEqualTo(503).expectBody()
                .jsonPath("$.components.workers.status").isEqualTo("DOWN")
                .jsonPath("$.components.workers.details.worker-1.state").isEqualTo("STARTING");

        Incarnation w0 = Incarnation.random();
        sendSetupDone(0, w0);
        await().atMost(Duration.ofSeconds(10)).until(() -> loop.snapshot().workers().get(EntityId.worker(0)).state() == WorkerLifecycle.READY);
        readiness().expectStatus().isEqualTo(503).expectBody()
                .jsonPath("$.components.workers.details.worker-0.state").isEqualTo("READY")
                .jsonPath("$.components.workers.details.worker-1.state").isEqualTo("STARTING");

        Incarnation w1 = Incarnation.random();
        AtomicBoolean worker1Alive = new AtomicBoolean(true);
        AtomicBoolean running = new AtomicBoolean(true);
        Thread heartbeats = new Thread(() -> {
            while (running.get()) {
                sendSetupDone(0, w0);
                if (worker1Alive.get()) {
                    sendSetupDone(1, w1);
                }
                sleep(300);
            }
        }, "test-worker-heartbeats");
        heartbeats.start();
        try {
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> readiness().expectStatus().isOk());
            assertThat(loop.ask(r -> r.state(EntityId.worker(1))).block(Duration.ofSeconds(2))).isEqualTo(WorkerLifecycle.READY);

            worker1Alive.set(false);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> readiness().expectStatus().isEqualTo(503)
                    .expectBody().jsonPath("$.components.workers.details.worker-1.state").isEqualTo("LOST"));
            assertThat(prometheus()).contains("mstar_conductor_worker_losses_total{worker=\"worker-1\"} 1.0");

            Incarnation restarted = Incarnation.random();
            sendSetupDone(1, restarted);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> readiness().expectStatus().isOk());
            assertThat(prometheus()).contains("mstar_conductor_worker_restarts_total{worker=\"worker-1\"} 1.0");
        } finally {
            running.set(false);
            heartbeats.join();
        }
    }

    @Test
    void malformedAndForeignConfigRecordsAreDeadLetteredAndConsumptionCarriesOn() {
        byte[] malformed = "{\"message_type\": \"setup_done\", ".getBytes(StandardCharsets.UTF_8);
        byte[] valid = codec.encode(ConductorMessage.of(new SetupDone("worker-0")));
        records.send(TOPICS.conductor(), "dlq-malformed", malformed, EntityId.worker(0), Incarnation.random(), DIGEST);
        records.send(TOPICS.conductor(), "dlq-foreign", valid, EntityId.worker(0), Incarnation.random(), new ConfigDigest("0badc0de"));
        records.send(TOPICS.conductor(), "r-after-dlq", codec.encode(ConductorMessage.of(new AbortRequest("r-after-dlq"))),
                EntityId.worker(0), Incarnation.random(), DIGEST);

        List<ConsumerRecord<String, byte[]>> dead = records.readFromStart(TOPICS.deadLetter(), 2, Duration.ofSeconds(15));
        assertThat(dead).extracting(ConsumerRecord::key).containsExactlyInAnyOrder("dlq-malformed", "dlq-foreign");
        ConsumerRecord<String, byte[]> malformedDead = dead.stream().filter(r -> r.key().equals("dlq-malformed")).findFirst().orElseThrow();
        assertThat(malformedDead.value()).isEqualTo(malformed);
        assertThat(ControlHeaders.text(malformedDead.headers(), ControlHeaders.DLQ_REASON)).isEqualTo("malformed_json");
        assertThat(ControlHeaders.text(malformedDead.headers(), ControlHeaders.DLQ_RECEIVER)).isEqualTo("conductor");
        assertThat(ControlHeaders.text(malformedDead.headers(), "kafka_dlt-original-topic")).isEqualTo("mstar.conductor");
        assertThat(malformedDead.headers().lastHeader("kafka_dlt-original-offset")).isNotNull();
        assertThat(malformedDead.headers().lastHeader("kafka_dlt-exception-fqcn")).isNotNull();
        ConsumerRecord<String, byte[]> foreignDead = dead.stream().filter(r -> r.key().equals("dlq-foreign")).findFirst().orElseThrow();
        assertThat(ControlHeaders.text(foreignDead.headers(), ControlHeaders.DLQ_REASON)).isEqualTo("config_mismatch");

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(prometheus())
                .contains("mstar_conductor_messages_dead_lettered_total{reason=\"malformed_json\"} 1.0")
                .contains("mstar_conductor_messages_dead_lettered_total{reason=\"config_mismatch\"} 1.0")
                .contains("mstar_conductor_messages_received_total{message_type=\"abort_request\"} 1.0")
                .contains("mstar_conductor_message_latency_seconds_count{message_type=\"abort_request\"} 1")
                .contains("mstar_conductor_kafka_consumer_lag_records"));
        assertScrapeHoldsEveryDeclaredMeter();
    }

    @Test
    void livenessDependsOnlyOnTheLifecycleLoop() {
        web.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.components.lifecycleLoop.status").isEqualTo("UP")
                .jsonPath("$.components.lifecycleLoop.details.thread").isEqualTo("mstar-conductor-lifecycle")
                .jsonPath("$.components.kafka").doesNotExist()
                .jsonPath("$.components.workers").doesNotExist();
    }

    private void sendSetupDone(int ordinal, Incarnation incarnation) {
        records.send(TOPICS.conductor(), "worker-" + ordinal, codec.encode(ConductorMessage.of(new SetupDone("worker-" + ordinal))),
                EntityId.worker(ordinal), incarnation, DIGEST);
    }

    private WebTestClient.ResponseSpec readiness() {
        return web.get().uri("/actuator/health/readiness").exchange();
    }

    /**
     * The scrape holds every meter the role declares, under the Prometheus name operators query
     * (docs/architecture.md#meters-declared-once-per-role).
     */
    private void assertScrapeHoldsEveryDeclaredMeter() {
        ControlPlaneScrape.assertHoldsEveryDeclaredMeter(prometheus(), ControlPlaneMeters.Role.CONDUCTOR);
    }

    private String prometheus() {
        return web.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
