package io.mstar.bench.kafka;

import io.mstar.stack.KafkaBroker;
import io.mstar.stack.ProjectLayout;
import io.mstar.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;

/**
 * The floor under every control-plane latency: one envelope's produce→consume round trip through
 * a real local broker, with the producer settings the services use (idempotent, acks=all,
 * linger.ms=0) and the headers they attach, and nothing of the services themselves.
 *
 * <p>Ping-pong: each message is sent only after the previous one was consumed, so the figure is
 * latency, not queueing. Then a pipelined phase sends the same number back to back for the
 * one-producer throughput. Send and receive times come from one clock: producer and consumer
 * live in this JVM.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.mstar.bench.kafka.KafkaRoundTrip [--warmup N] [--messages M] [--pipelined P]</pre>
 */
public final class KafkaRoundTrip {

    /** worker_graphs_done travels to the conductor. */
    private static final String TOPIC = "mstar.conductor";
    private static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(30);

    private final String bootstrapServers;
    private final byte[] envelope;

    private KafkaRoundTrip(String bootstrapServers, byte[] envelope) {
        this.bootstrapServers = bootstrapServers;
        this.envelope = envelope;
    }

    public static void main(String[] args) throws Exception {
        int warmup = intOption(args, "--warmup", 5_000);
        int messages = intOption(args, "--messages", 20_000);
        int pipelined = intOption(args, "--pipelined", 200_000);
        byte[] envelope = envelope();
        Path dir = Files.createTempDirectory("mstar-kafka-roundtrip");
        System.out.printf("envelope: worker_graphs_done to %s, %d bytes of JSON; warm-up %d, measured %d%n", TOPIC,
                envelope.length, warmup, messages);
        try (KafkaBroker broker = KafkaBroker.start(ProjectLayout.discover(),
                KafkaBroker.Settings.in(dir.resolve("kafka-data"), dir.resolve("kafka.log")))) {
            System.out.println("broker: " + broker.bootstrapServers() + " (log " + dir.resolve("kafka.log") + ")");
            new KafkaRoundTrip(broker.bootstrapServers(), envelope).run(warmup, messages, pipelined);
        }
        Files.deleteIfExists(dir.resolve("kafka.log"));
        Files.deleteIfExists(dir);
    }

    private void run(int warmup, int messages, int pipelinedMessages) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        BlockingQueue<long[]> received = new LinkedBlockingQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread consumer = new Thread(() -> consume(received, running), "mstar-bench-roundtrip-consumer");
        try (KafkaProducer<Long, byte[]> producer = producer()) {
            consumer.start();
            // The consumer signals once it is positioned; records sent before that would be missed.
            take(received);
            long[] warm = pingPong(producer, received, 0, warmup);
            report("warm-up (discarded)", warm);
            long start = System.nanoTime();
            long[] latencies = pingPong(producer, received, warmup, messages);
            double seconds = (System.nanoTime() - start) / 1e9;
            report("ping-pong", latencies);
            System.out.printf("ping-pong throughput: %.0f msgs/s%n", messages / seconds);
            pipelined(producer, received, warmup + messages, pipelinedMessages);
        } finally {
            running.set(false);
            consumer.join(10_000);
        }
    }

    /** Sends message {@code first + i}, waits for its arrival, records send→receive nanos. */
    private long[] pingPong(KafkaProducer<Long, byte[]> producer, BlockingQueue<long[]> received,
                            long first, int count) throws Exception {
        long[] latencies = new long[count];
        for (int i = 0; i < count; i++) {
            long sequence = first + i;
            long sentAt = System.nanoTime();
            producer.send(record(sequence, sentAt));
            long[] arrival = take(received);
            if (arrival[0] != sequence) {
                throw new IllegalStateException("expected message " + sequence + ", received " + arrival[0]);
            }
            latencies[i] = arrival[1] - sentAt;
        }
        return latencies;
    }

    /** Back to back: the one-producer throughput with the control-plane settings. */
    private void pipelined(KafkaProducer<Long, byte[]> producer, BlockingQueue<long[]> received,
                           long first, int count) throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            producer.send(record(first + i, System.nanoTime()));
        }
        producer.flush();
        for (int i = 0; i < count; i++) {
            take(received);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("pipelined throughput (%d messages, one producer, linger.ms=0): %.0f msgs/s%n",
                count, count / seconds);
    }

    private ProducerRecord<Long, byte[]> record(long sequence, long sentAt) {
        ProducerRecord<Long, byte[]> record = new ProducerRecord<>(TOPIC, sequence, envelope);
        // The headers every control message carries (ARCHITECTURE §3.2), so record size is real.
        record.headers()
                .add("mstar-sender", "worker-1".getBytes(StandardCharsets.UTF_8))
                .add("mstar-incarnation", "5f0c8a3e9b7d4e21".getBytes(StandardCharsets.UTF_8))
                .add("mstar-sent-at", Long.toString(sentAt).getBytes(StandardCharsets.UTF_8))
                .add("mstar-config", "3b8f1c0d9e2a47b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2"
                        .getBytes(StandardCharsets.UTF_8));
        return record;
    }

    private KafkaProducer<Long, byte[]> producer() {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.CLIENT_ID_CONFIG, "mstar-bench-roundtrip-producer",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 0),
                new LongSerializer(), new ByteArraySerializer());
    }

    /** Owned by the consumer thread: the consumer is used nowhere else. */
    private void consume(BlockingQueue<long[]> received, AtomicBoolean running) {
        try (KafkaConsumer<Long, byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG, "mstar-bench-roundtrip-consumer",
                // A fetch returns as soon as one record is there.
                ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false),
                new LongDeserializer(), new ByteArrayDeserializer())) {
            // Assigned, not subscribed: no group, no rebalance in the measurement.
            TopicPartition partition = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(partition));
            consumer.seekToEnd(List.of(partition));
            consumer.position(partition);
            received.add(new long[] {-1, System.nanoTime()});
            while (running.get()) {
                for (ConsumerRecord<Long, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    long now = System.nanoTime();
                    if (record.value().length != envelope.length) {
                        throw new IllegalStateException("record " + record.key() + " has "
                                + record.value().length + " bytes, sent " + envelope.length);
                    }
                    received.add(new long[] {record.key(), now});
                }
            }
        }
    }

    private static long[] take(BlockingQueue<long[]> received) throws InterruptedException {
        long[] arrival = received.poll(RECEIVE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (arrival == null) {
            throw new IllegalStateException("nothing consumed within " + RECEIVE_TIMEOUT.toSeconds() + " s");
        }
        return arrival;
    }

    private static void report(String phase, long[] latenciesNanos) {
        long[] sorted = latenciesNanos.clone();
        java.util.Arrays.sort(sorted);
        System.out.printf("%s: n=%d p50=%.3f ms p90=%.3f ms p99=%.3f ms max=%.3f ms%n", phase, sorted.length,
                millis(percentile(sorted, 0.50)), millis(percentile(sorted, 0.90)),
                millis(percentile(sorted, 0.99)), millis(sorted[sorted.length - 1]));
    }

    /** Nearest-rank percentile of sorted values. */
    private static long percentile(long[] sorted, double fraction) {
        int rank = (int) Math.ceil(fraction * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    private static byte[] envelope() throws IOException {
        // A representative worker_graphs_done (one persisted descriptor, loop indices, timings,
        // rx/tx), the most frequent large control message: the golden file trimmed to one entry
        // per list. Decoded and re-encoded, so the bytes are exactly what the codec would send.
        try (InputStream in = KafkaRoundTrip.class.getResourceAsStream("worker_graphs_done.json")) {
            WireCodec codec = new WireCodec();
            return codec.encode(codec.decodeConductorMessage(in.readAllBytes()));
        }
    }

    private static int intOption(String[] args, String name, int fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return Integer.parseInt(args[i + 1]);
            }
        }
        return fallback;
    }
}
