package io.mstar.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.kafka.test.context.EmbeddedKafka;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.mstar.controlplane.ControlRecordsExtension;
import io.mstar.deployment.ConfigDigest;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.ControlPlaneMeters;
import io.mstar.messaging.ControlPlaneScrape;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Topics;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.MessageSource;
import io.mstar.wire.SetupDone;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerMessage;
import io.mstar.wire.WorkerMessageType;
import io.mstar.worker.engine.EngineLoop;

/**
 * Worker 1 against a real in-JVM broker over real HTTP: it announces itself and keeps doing so, is ready on
 * its own, dead-letters refused records and carries on consuming.
 */
@Tag("kafka")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.kafka.bootstrap-servers=${spring.embedded.kafka.brokers}",
        "mstar.worker.id=1",
        "mstar.worker.setup-done-interval=300ms",
        "mstar.messaging.topic-prefix=wt"})
@AutoConfigureWebTestClient
@EmbeddedKafka(partitions = 1)
class WorkerControlPlaneTests {

    private static final ConfigDigest DIGEST = DeploymentConfig.loadDefault().digest();
    private static final Topics TOPICS = new Topics("wt");

    @Autowired
    WebTestClient web;
    @Autowired
    EngineLoop loop;
    @Autowired
    io.mstar.worker.engine.WorkerDataPlane dataPlane;

    private final WireCodec codec = new WireCodec();

    @RegisterExtension
    final ControlRecordsExtension records = new ControlRecordsExtension();

    @Test
    void becomesReadyOnItsOwnOnceItsSetupDoneIsAcknowledged() {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> web.get().uri("/actuator/health/readiness").exchange()
                .expectStatus().isOk().expectBody()
                .jsonPath("$.components.setupDone.status").isEqualTo("UP")
                .jsonPath("$.components.engineLoop.status").isEqualTo("UP"));
    }

    @Test
    void repeatsSetupDoneWithItsIdKeyAndControlHeaders() {
        List<ConsumerRecord<String, byte[]>> announced = records.readFromStart(TOPICS.conductor(), 3, Duration.ofSeconds(15));

        assertThat(announced).hasSizeGreaterThanOrEqualTo(3);
        for (ConsumerRecord<String, byte[]> record : announced) {
            assertThat(record.key()).isEqualTo("worker-1");
            assertThat(codec.decodeConductorMessage(record.value())).isEqualTo(ConductorMessage.of(new SetupDone("worker-1")));
            ControlHeaders.Stamp stamp = ControlHeaders.read(record.headers());
            assertThat(stamp.sender()).isEqualTo(EntityId.worker(1));
            assertThat(stamp.config()).isEqualTo(DIGEST);
            assertThat(stamp.sentAtEpochNanos()).isGreaterThan(1_700_000_000L * 1_000_000_000L);
        }
        // One process start, one incarnation: the conductor must not read a restart into a heartbeat.
        assertThat(announced.stream().map(r -> ControlHeaders.text(r.headers(), ControlHeaders.INCARNATION)).distinct()).hasSize(1);
        assertThat(prometheus()).containsPattern("mstar_worker_messages_sent_total\\{message_type=\"setup_done\"\\} [1-9]");
    }

    @Test
    void malformedAndForeignConfigRecordsAreDeadLetteredAndConsumptionCarriesOn() {
        String inboxTopic = TOPICS.worker(1);
        byte[] malformed = "not json at all".getBytes(StandardCharsets.UTF_8);
        byte[] valid = codec.encode(WorkerMessage.of(new DrainRequest("r-1", MessageSource.CONDUCTOR)));
        records.send(inboxTopic, "r-malformed", malformed, EntityId.CONDUCTOR, Incarnation.random(), DIGEST);
        records.send(inboxTopic, "r-foreign", valid, EntityId.CONDUCTOR, Incarnation.random(), new ConfigDigest("0badc0de"));
        records.send(inboxTopic, "r-headerless", valid, EntityId.CONDUCTOR, Incarnation.random(), null);
        records.send(inboxTopic, "r-1", valid, EntityId.CONDUCTOR, Incarnation.random(), DIGEST);

        List<ConsumerRecord<String, byte[]>> dead = records.readFromStart(TOPICS.deadLetter(), 3, Duration.ofSeconds(15));
        assertThat(dead).extracting(ConsumerRecord::key).containsExactlyInAnyOrder("r-malformed", "r-foreign", "r-headerless");
        for (ConsumerRecord<String, byte[]> record : dead) {
            String expected = switch (record.key()) {
                case "r-malformed" -> "malformed_json";
                case "r-foreign" -> "config_mismatch";
                default -> "missing_header";
            };
            assertThat(ControlHeaders.text(record.headers(), ControlHeaders.DLQ_REASON)).as(record.key()).isEqualTo(expected);
            assertThat(ControlHeaders.text(record.headers(), ControlHeaders.DLQ_RECEIVER)).isEqualTo("worker-1");
            assertThat(ControlHeaders.text(record.headers(), "kafka_dlt-original-topic")).isEqualTo("wt.worker.worker-1");
        }

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(prometheus())
                .contains("mstar_worker_messages_dead_lettered_total{reason=\"malformed_json\"} 1.0")
                .contains("mstar_worker_messages_dead_lettered_total{reason=\"config_mismatch\"} 1.0")
                .contains("mstar_worker_messages_dead_lettered_total{reason=\"missing_header\"} 1.0")
                .contains("mstar_worker_messages_received_total{message_type=\"drain_request\"} 1.0"));
        // Received means handed to the engine loop, which owns the count.
        assertThat(loop.ask(state -> state.handled().get(WorkerMessageType.DRAIN_REQUEST)).block(Duration.ofSeconds(2)))
                .isEqualTo(1L);
        assertScrapeHoldsEveryDeclaredMeter();
    }

    @Test
    void livenessDependsOnlyOnTheEngineLoopWhichRunsOnItsNamedThread() {
        web.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.components.engineLoop.status").isEqualTo("UP")
                .jsonPath("$.components.setupDone").doesNotExist();
        Set<String> threads = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .collect(java.util.stream.Collectors.toSet());
        assertThat(threads).contains("mstar-worker-1-engine-loop");
        assertThat(threads).anyMatch(name -> name.startsWith("mstar-worker-1-inbox-"));
        // Engine state leaves the loop only through ask(): reading it from here must fail loudly.
        EngineLoop.State leaked = loop.ask(state -> state).block(Duration.ofSeconds(2));
        org.assertj.core.api.Assertions.assertThatThrownBy(leaked::handled)
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("mstar-worker-1-engine-loop");
    }

    @Test
    void prometheusExposesTheControlPlaneMeterNames() {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(prometheus())
                .contains("mstar_worker_kafka_consumer_lag_records")
                .contains("mstar_worker_messages_dead_lettered_total{reason=\"unknown\"}"));
    }

    @Test
    void prometheusExposesTheEngineAndTensorMetersFromTheStart() {
        assertThat(prometheus())
                .contains("mstar_worker_requests_active 0.0")
                .contains("mstar_worker_requests_queued 0.0")
                .contains("mstar_worker_requests_ended_total{cause=\"completed\"} 0.0")
                .contains("mstar_worker_tensors_live{state=\"owned\"} 0.0")
                .contains("mstar_worker_device_memory_used_bytes{device=\"host\"}");
    }

    @Test
    void theEngineEndpointDescribesWhatTheLoopHolds() {
        web.get().uri("/actuator/engine").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.requests").isArray()
                .jsonPath("$.requests.length()").isEqualTo(0)
                .jsonPath("$.steps").isArray()
                .jsonPath("$.pageWaits").isEqualTo(0);
    }

    @Test
    void readinessIncludesTheDeviceAndTheTensorServerIsListening() {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> web.get().uri("/actuator/health/readiness")
                .exchange().expectStatus().isOk().expectBody().jsonPath("$.components.device.status").isEqualTo("UP"));
        assertThat(dataPlane.sessionId()).matches(".+:[1-9][0-9]*");
    }

    /**
     * The scrape holds every meter the role declares, under the Prometheus name operators query
     * (docs/architecture.md#meters-declared-once-per-role).
     */
    private void assertScrapeHoldsEveryDeclaredMeter() {
        ControlPlaneScrape.assertHoldsEveryDeclaredMeter(prometheus(), ControlPlaneMeters.Role.WORKER);
    }

    private String prometheus() {
        return web.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }
}
