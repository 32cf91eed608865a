package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.mstar.deployment.ConfigDigest;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.DeadLetterReason;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Incarnation;
import io.mstar.messaging.Topics;
import io.mstar.wire.MessageSource;
import io.mstar.wire.RemoveRequest;
import io.mstar.wire.WireCodec;
import io.mstar.wire.WorkerMessage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A record a worker cannot accept goes to the dead-letter topic with its reason, and the worker
 * carries on: the partition is not stuck behind it and the service stays ready.
 */
@Tag("kafka")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeadLetterTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);
    /** A whole scrape: on 2 shared cores with four JVMs a pause can outlast the probe's 5 s (seen once in a full run). */
    private static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(20);
    /**
     * Scrapes tried before giving up. A worker's first scrapes once went unanswered for 20 s in CI (never here in
     * repeated runs); a fresh connection was not tried, so whether the endpoint stayed stuck is unknown. A later
     * attempt that answers shows a one-off stall, and is printed so it stays visible.
     */
    private static final int SCRAPE_ATTEMPTS = 3;

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    private final WireCodec codec = new WireCodec();
    private Topics topics;
    private ConfigDigest deploymentDigest;
    private KafkaProducer<String, byte[]> producer;
    private KafkaConsumer<String, byte[]> deadLetters;

    @BeforeAll
    void connect() {
        LocalStack stack = STACK.stack();
        topics = new Topics(stack.topicPrefix());
        deploymentDigest = ConfigDigest.of(DeploymentConfig.load(stack.stateDir().resolve("deployment.yaml")));
        producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers(),
                ProducerConfig.CLIENT_ID_CONFIG, "e2e-dead-letter-producer",
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new ByteArraySerializer());
        deadLetters = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers(),
                ConsumerConfig.CLIENT_ID_CONFIG, "e2e-dead-letter-reader",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(), new ByteArrayDeserializer());
        // Assigned from the beginning: the topic exists (the services create it) and only these tests write to it.
        List<TopicPartition> partitions = deadLetters.partitionsFor(topics.deadLetter(), TIMEOUT).stream()
                .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
        deadLetters.assign(partitions);
        deadLetters.seekToBeginning(partitions);
    }

    @AfterAll
    void disconnect() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        if (deadLetters != null) {
            deadLetters.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void malformedRecordIsDeadLetteredWhileTheWorkerStaysReadyAndKeepsConsuming() throws Exception {
        ServiceProcess worker = STACK.stack().workers().get(0);
        String key = "e2e-malformed-" + System.nanoTime();
        byte[] malformed = "{\"message_type\": \"remove_request\", \"body\": {\"request_id\": "
                .getBytes(StandardCharsets.UTF_8);

        send(key, malformed, deploymentDigest);

        ConsumerRecord<String, byte[]> dead = awaitDeadLetter(key);
        assertThat(dead.value()).isEqualTo(malformed);
        assertThat(ControlHeaders.text(dead.headers(), ControlHeaders.DLQ_REASON))
                .isEqualTo(DeadLetterReason.MALFORMED_JSON.value());
        assertThat(ControlHeaders.text(dead.headers(), ControlHeaders.DLQ_RECEIVER)).isEqualTo("worker-0");
        assertThat(scrape(worker).value("mstar_worker_messages_dead_lettered_total",
                Map.of("reason", DeadLetterReason.MALFORMED_JSON.value())))
                .hasValueSatisfying(count -> assertThat(count).isGreaterThanOrEqualTo(1.0));
        assertThat(HttpProbe.status(worker.readinessUrl(), HTTP_TIMEOUT)).isEqualTo(200);

        // The record after the bad one is consumed: the worker did not stop at the poison record.
        double removesBefore = removeRequestsReceived(worker);
        String requestId = "e2e-after-malformed-" + System.nanoTime();
        send(requestId, codec.encode(WorkerMessage.of(new RemoveRequest(requestId, MessageSource.CONDUCTOR, 0))),
                deploymentDigest);
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(250))
                .untilAsserted(() -> assertThat(removeRequestsReceived(worker)).isGreaterThan(removesBefore));
        assertThat(HttpProbe.status(worker.readinessUrl(), HTTP_TIMEOUT)).isEqualTo(200);
    }

    @Test
    void validEnvelopeFromAnotherDeploymentIsDeadLetteredAsConfigMismatch() throws Exception {
        ServiceProcess worker = STACK.stack().workers().get(0);
        String requestId = "e2e-foreign-config-" + System.nanoTime();
        byte[] envelope = codec.encode(WorkerMessage.of(new RemoveRequest(requestId, MessageSource.CONDUCTOR, 0)));
        ConfigDigest foreign = new ConfigDigest("f".repeat(64));
        assertThat(foreign).isNotEqualTo(deploymentDigest);

        send(requestId, envelope, foreign);

        ConsumerRecord<String, byte[]> dead = awaitDeadLetter(requestId);
        assertThat(dead.value()).isEqualTo(envelope);
        assertThat(ControlHeaders.text(dead.headers(), ControlHeaders.DLQ_REASON))
                .isEqualTo(DeadLetterReason.CONFIG_MISMATCH.value());
        assertThat(scrape(worker).value("mstar_worker_messages_dead_lettered_total",
                Map.of("reason", DeadLetterReason.CONFIG_MISMATCH.value())))
                .hasValueSatisfying(count -> assertThat(count).isGreaterThanOrEqualTo(1.0));
        assertThat(HttpProbe.status(worker.readinessUrl(), HTTP_TIMEOUT)).isEqualTo(200);
    }

    @Test
    void poisonOnEveryOtherTopicIsDeadLetteredByItsReceiverWhichCarriesOn() throws Exception {
        byte[] poison = "{\"message_type\": \"no_such_type\", \"body\": {}}".getBytes(StandardCharsets.UTF_8);
        ServiceProcess worker1 = STACK.stack().workers().get(1);
        double worker1Before = received(worker1, "mstar_worker_messages_received_total", "conductor_heartbeat");
        String toWorker1 = "e2e-poison-worker-1-" + System.nanoTime();
        send(topics.worker(1), toWorker1, poison, deploymentDigest);
        ConsumerRecord<String, byte[]> dead = awaitDeadLetter(toWorker1);
        assertThat(ControlHeaders.text(dead.headers(), ControlHeaders.DLQ_REASON))
                .isEqualTo(DeadLetterReason.UNKNOWN_MESSAGE_TYPE.value());
        assertThat(ControlHeaders.text(dead.headers(), ControlHeaders.DLQ_RECEIVER)).isEqualTo("worker-1");
        // The conductor's heartbeats after the poison record still arrive.
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> assertThat(
                received(worker1, "mstar_worker_messages_received_total", "conductor_heartbeat")).isGreaterThan(worker1Before));

        ServiceProcess conductor = STACK.stack().conductor();
        double conductorBefore = received(conductor, "mstar_conductor_messages_received_total", "setup_done");
        String toConductor = "e2e-poison-conductor-" + System.nanoTime();
        send(topics.conductor(), toConductor, "not json at all".getBytes(StandardCharsets.UTF_8), deploymentDigest);
        dead = awaitDeadLetter(toConductor);
        assertThat(ControlHeaders.text(dead.headers(), ControlHeaders.DLQ_REASON))
                .isEqualTo(DeadLetterReason.MALFORMED_JSON.value());
        assertThat(ControlHeaders.text(dead.headers(), ControlHeaders.DLQ_RECEIVER)).isEqualTo("conductor");
        assertThat(scrape(conductor).value("mstar_conductor_messages_dead_lettered_total",
                Map.of("reason", DeadLetterReason.MALFORMED_JSON.value())))
                .hasValueSatisfying(count -> assertThat(count).isGreaterThanOrEqualTo(1.0));
        // The workers' SetupDone heartbeats after the poison record still arrive, and the conductor stays ready.
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> assertThat(
                received(conductor, "mstar_conductor_messages_received_total", "setup_done")).isGreaterThan(conductorBefore));
        assertThat(HttpProbe.status(conductor.readinessUrl(), HTTP_TIMEOUT)).isEqualTo(200);
        assertThat(HttpProbe.status(worker1.readinessUrl(), HTTP_TIMEOUT)).isEqualTo(200);
    }

    private static double received(ServiceProcess service, String metric, String messageType) {
        return scrape(service).value(metric, Map.of("message_type", messageType)).orElse(0.0);
    }

    /** Sends to worker-0 with the headers a real conductor would attach, carrying {@code config}. */
    private void send(String key, byte[] value, ConfigDigest config) throws Exception {
        send(topics.worker(0), key, value, config);
    }

    private void send(String topic, String key, byte[] value, ConfigDigest config) throws Exception {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, key, value);
        ControlHeaders.write(record.headers(), new ControlHeaders.Stamp(EntityId.CONDUCTOR, Incarnation.random(),
                ControlHeaders.epochNanos(Clock.systemUTC()), config));
        producer.send(record).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private ConsumerRecord<String, byte[]> awaitDeadLetter(String key) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        List<String> seen = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<String, byte[]> record : deadLetters.poll(Duration.ofMillis(250))) {
                if (key.equals(record.key())) {
                    return record;
                }
                seen.add(record.key());
            }
        }
        throw new AssertionError("no record with key " + key + " on " + topics.deadLetter() + " within "
                + TIMEOUT.toSeconds() + " s; saw keys " + seen);
    }

    private double removeRequestsReceived(ServiceProcess worker) {
        Optional<Double> value = scrape(worker).value("mstar_worker_messages_received_total",
                Map.of("message_type", "remove_request"));
        return value.orElse(0.0);
    }

    private static PrometheusScrape scrape(ServiceProcess worker) {
        for (int attempt = 1; ; attempt++) {
            try {
                return new PrometheusScrape(HttpProbe.body(worker.prometheusUrl(), SCRAPE_TIMEOUT));
            } catch (StackException e) {
                if (attempt == SCRAPE_ATTEMPTS) {
                    throw e;
                }
                System.out.printf("[dead-letter] scrape %d of %s failed, trying again: %s%n", attempt, worker.name(),
                        e.getMessage());
            }
        }
    }
}
