package io.mstar.bench.kafka;

import io.mstar.bench.DriverLogging;
import io.mstar.messaging.ControlClientSettings;
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
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;

/**
 * The floor under every control-plane latency: one envelope's produce→consume round trip through
 * a real local broker, with the producer settings the services use (idempotent, acks=all,
 * linger.ms=0) and the headers they attach, and nothing of the services themselves.
 *
 * <p>Ping-pong: each message is sent only after the previous one was consumed, so the figure is
 * latency, not queueing. One hop is produce→consume; a round trip is A→B then B→A, an echo
 * consumer sending each record on with its own producer (what a conductor transition costs in
 * Kafka alone: the worker's report in, the next signals out). Then a pipelined phase sends the
 * same number back to back for the one-producer throughput. Send and receive times come from one
 * clock: producers and consumers live in this JVM.
 *
 * <p>{@code --container-messages C} adds round trips whose echo is a Spring listener container set up as the
 * services' inboxes are (group subscription, time-based asynchronous commits, an error-handling deserializer), in
 * turns with the plain echo, back to back and idling {@code --container-gap-ms} before each: what the container
 * itself adds to a service's hop.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar io.mstar.bench.kafka.KafkaRoundTrip [--warmup N] [--messages M] [--pipelined P]
 *     [--gap-ms G] [--gap-messages K] [--container-messages C] [--container-gap-ms D] [--verbose]</pre>
 *
 * <p>{@code --verbose} keeps the Kafka clients' INFO logging (their configuration dumps); see {@link DriverLogging}.
 */
public final class KafkaRoundTrip {

    /** worker_graphs_done travels to the conductor. */
    private static final String TOPIC = "mstar.conductor";
    private static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(30);

    private final String bootstrapServers;
    private final byte[] envelope;
    /** One hop lands here; a round trip goes out on {@code there} and comes back on {@code back}. */
    private final String topic;
    private final String there;
    private final String back;

    private KafkaRoundTrip(String bootstrapServers, byte[] envelope, String topic) {
        this.bootstrapServers = bootstrapServers;
        this.envelope = envelope;
        this.topic = topic;
        this.there = topic + ".there";
        this.back = topic + ".back";
    }

    /**
     * Send→receive nanoseconds of each measured message: one hop, two (there and back), and two with
     * both consumers committing their offsets synchronously after every poll that returned records, as
     * the services' Spring listener containers do (their default ack mode).
     */
    public record Result(long[] oneHopNanos, long[] roundTripNanos, long[] roundTripCommittingNanos) {
    }

    /**
     * Ping-pong on a broker that is already running (a local stack's, say), on topics named
     * {@code topic}, {@code topic.there} and {@code topic.back}, which are created here and must not
     * be any service's.
     */
    public static Result measure(String bootstrapServers, String topic, int warmup, int messages) throws Exception {
        KafkaRoundTrip bench = new KafkaRoundTrip(bootstrapServers, envelope(), topic);
        bench.createTopics();
        long[] oneHop;
        long[] roundTrip;
        try (Hop hop = bench.new Hop(bench.topic, null, false)) {
            bench.pingPong(hop, 0, warmup);
            oneHop = bench.pingPong(hop, warmup, messages);
        }
        try (Hop hop = bench.new Hop(bench.back, bench.there, false)) {
            bench.pingPong(hop, 0, warmup);
            roundTrip = bench.pingPong(hop, warmup, messages);
        }
        // Sequences go on from the last phase: the topics still hold its records.
        try (Hop hop = bench.new Hop(bench.back, bench.there, true)) {
            bench.pingPong(hop, warmup + messages, warmup);
            return new Result(oneHop, roundTrip, bench.pingPong(hop, 2L * warmup + messages, messages));
        }
    }

    public static void main(String[] args) throws Exception {
        args = DriverLogging.configure(args);
        int warmup = intOption(args, "--warmup", 5_000);
        int messages = intOption(args, "--messages", 20_000);
        int pipelined = intOption(args, "--pipelined", 200_000);
        int gapMillis = intOption(args, "--gap-ms", 20);
        int gapMessages = intOption(args, "--gap-messages", 500);
        int containerMessages = intOption(args, "--container-messages", 0);
        int containerGapMillis = intOption(args, "--container-gap-ms", 2);
        byte[] envelope = envelope();
        Path dir = Files.createTempDirectory("mstar-kafka-roundtrip");
        System.out.printf("envelope: worker_graphs_done, %d bytes of JSON; warm-up %d, measured %d%n",
                envelope.length, warmup, messages);
        try (KafkaBroker broker = KafkaBroker.start(ProjectLayout.discover(),
                KafkaBroker.Settings.in(dir.resolve("kafka-data"), dir.resolve("kafka.log")))) {
            System.out.println("broker: " + broker.bootstrapServers() + " (log " + dir.resolve("kafka.log") + ")");
            KafkaRoundTrip bench = new KafkaRoundTrip(broker.bootstrapServers(), envelope, TOPIC);
            bench.run(warmup, messages, pipelined, gapMillis, gapMessages);
            if (containerMessages > 0) {
                bench.containerEcho(warmup, containerMessages, containerGapMillis);
            }
        }
        Files.deleteIfExists(dir.resolve("kafka.log"));
        Files.deleteIfExists(dir);
    }

    private void run(int warmup, int messages, int pipelinedMessages, int gapMillis, int gapMessages) throws Exception {
        createTopics();
        try (Hop hop = new Hop(topic, null, false)) {
            report("warm-up (discarded)", pingPong(hop, 0, warmup));
            long start = System.nanoTime();
            long[] latencies = pingPong(hop, warmup, messages);
            double seconds = (System.nanoTime() - start) / 1e9;
            report("ping-pong", latencies);
            System.out.printf("ping-pong throughput: %.0f msgs/s%n", messages / seconds);
            try (Hop roundTrip = new Hop(back, there, false)) {
                pingPong(roundTrip, 0, warmup);
                report("round trip (there and back)", pingPong(roundTrip, warmup, messages));
                if (gapMillis > 0 && gapMessages > 0) {
                    // Every process parks between messages, as between a service's walk transitions.
                    report("round trip, " + gapMillis + " ms idle before each", pingPong(roundTrip, warmup + messages,
                            gapMessages, gapMillis));
                }
            }
            pipelined(hop, warmup + messages, pipelinedMessages);
        }
    }

    private void createTopics() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1), new NewTopic(there, 1, (short) 1),
                    new NewTopic(back, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * A producer to {@code first} (the hop's topic, or {@code there} with an echo that sends each
     * record on to {@code arrival}) and a consumer thread on {@code arrival} reporting arrivals.
     */
    private final class Hop implements AutoCloseable {
        final String first;
        final KafkaProducer<Long, byte[]> producer = producer("mstar-bench-roundtrip-producer");
        final BlockingQueue<long[]> received = new LinkedBlockingQueue<>();
        final AtomicBoolean running = new AtomicBoolean(true);
        final List<Thread> threads = new java.util.ArrayList<>();

        private ConcurrentMessageListenerContainer<Long, byte[]> container;
        private KafkaProducer<Long, byte[]> containerProducer;

        Hop(String arrival, String echoFrom, boolean commit) throws InterruptedException {
            this(arrival, echoFrom, commit, false);
        }

        /** With {@code container}, the echo is a Spring listener container in a consumer group, as an inbox. */
        Hop(String arrival, String echoFrom, boolean commit, boolean container) throws InterruptedException {
            this.first = echoFrom == null ? arrival : echoFrom;
            Thread consumer = new Thread(() -> consume(arrival, received, running, null, commit),
                    "mstar-bench-roundtrip-consumer");
            threads.add(consumer);
            consumer.start();
            // The consumer signals once it is positioned; records sent before that would be missed.
            take(received);
            if (container) {
                containerProducer = producer("mstar-bench-roundtrip-container-echo");
                this.container = echoContainer(echoFrom, arrival, containerProducer);
            } else if (echoFrom != null) {
                BlockingQueue<long[]> echoReady = new LinkedBlockingQueue<>();
                Thread echo = new Thread(() -> {
                    try (KafkaProducer<Long, byte[]> echoProducer = producer("mstar-bench-roundtrip-echo")) {
                        consume(echoFrom, echoReady, running, (record, now) ->
                                echoProducer.send(copy(record, arrival)), commit);
                    }
                }, "mstar-bench-roundtrip-echo");
                threads.add(echo);
                echo.start();
                take(echoReady);
            }
        }

        @Override
        public void close() throws InterruptedException {
            if (container != null) {
                container.stop();
                containerProducer.close();
            }
            running.set(false);
            for (Thread thread : threads) {
                thread.join(10_000);
            }
            producer.close();
        }
    }

    /** Sends message {@code first + i}, waits for its arrival, records send→receive nanos. */
    private long[] pingPong(Hop hop, long first, int count) throws Exception {
        return pingPong(hop, first, count, 0);
    }

    /** The same, idle for {@code gapMillis} before each send. */
    private long[] pingPong(Hop hop, long first, int count, int gapMillis) throws Exception {
        long[] latencies = new long[count];
        for (int i = 0; i < count; i++) {
            if (gapMillis > 0) {
                Thread.sleep(gapMillis);
            }
            long sequence = first + i;
            long sentAt = System.nanoTime();
            hop.producer.send(record(hop.first, sequence, sentAt));
            long[] arrival = take(hop.received);
            if (arrival[0] != sequence) {
                throw new IllegalStateException("expected message " + sequence + ", received " + arrival[0]);
            }
            latencies[i] = arrival[1] - sentAt;
        }
        return latencies;
    }

    /** Back to back: the one-producer throughput with the control-plane settings. */
    private void pipelined(Hop hop, long first, int count) throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            hop.producer.send(record(hop.first, first + i, System.nanoTime()));
        }
        hop.producer.flush();
        for (int i = 0; i < count; i++) {
            take(hop.received);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("pipelined throughput (%d messages, one producer, linger.ms=0): %.0f msgs/s%n",
                count, count / seconds);
    }

    private ProducerRecord<Long, byte[]> record(String to, long sequence, long sentAt) {
        ProducerRecord<Long, byte[]> record = new ProducerRecord<>(to, sequence, envelope);
        // The headers every control message carries, so record size is real
        // (docs/architecture.md#topics-keys-and-headers).
        record.headers()
                .add("mstar-sender", "worker-1".getBytes(StandardCharsets.UTF_8))
                .add("mstar-incarnation", "5f0c8a3e9b7d4e21".getBytes(StandardCharsets.UTF_8))
                .add("mstar-sent-at", Long.toString(sentAt).getBytes(StandardCharsets.UTF_8))
                .add("mstar-config", "3b8f1c0d9e2a47b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2"
                        .getBytes(StandardCharsets.UTF_8));
        return record;
    }

    /** The same record, headers and all, on its way back. */
    private static ProducerRecord<Long, byte[]> copy(ConsumerRecord<Long, byte[]> record, String to) {
        return new ProducerRecord<Long, byte[]>(to, null, record.key(), record.value(), record.headers());
    }

    private KafkaProducer<Long, byte[]> producer(String clientId) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.CLIENT_ID_CONFIG, clientId,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 0),
                new LongSerializer(), new ByteArraySerializer());
    }

    /**
     * Owned by the calling thread: the consumer is used nowhere else. Each record goes to
     * {@code echo} if given, else its arrival to {@code received}.
     */
    private void consume(String from, BlockingQueue<long[]> received, AtomicBoolean running,
                         java.util.function.BiConsumer<ConsumerRecord<Long, byte[]>, Long> echo, boolean commit) {
        Map<String, Object> props = new java.util.HashMap<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG, "mstar-bench-roundtrip-consumer-" + from,
                // A fetch returns as soon as one record is there.
                ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false));
        if (commit) {
            // Offsets of an assigned partition can be committed under a group id without joining the group.
            props.put(ConsumerConfig.GROUP_ID_CONFIG, "mstar-bench-roundtrip-" + from);
        }
        try (KafkaConsumer<Long, byte[]> consumer = new KafkaConsumer<>(props,
                new LongDeserializer(), new ByteArrayDeserializer())) {
            // Assigned, not subscribed: no group, no rebalance in the measurement.
            TopicPartition partition = new TopicPartition(from, 0);
            consumer.assign(List.of(partition));
            consumer.seekToEnd(List.of(partition));
            consumer.position(partition);
            received.add(new long[] {-1, System.nanoTime()});
            while (running.get()) {
                var records = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<Long, byte[]> record : records) {
                    long now = System.nanoTime();
                    if (record.value().length != envelope.length) {
                        throw new IllegalStateException("record " + record.key() + " has "
                                + record.value().length + " bytes, sent " + envelope.length);
                    }
                    if (echo != null) {
                        echo.accept(record, now);
                    } else {
                        received.add(new long[] {record.key(), now});
                    }
                }
                if (commit && !records.isEmpty()) {
                    consumer.commitSync(); // after the records were handed on, before the next poll
                }
            }
        }
    }

    /**
     * Round trips echoed by a plain consumer thread and by a listener container, in alternating turns so both
     * see the same machine, back to back and then idling {@code gapMillis} before each message.
     */
    private void containerEcho(int warmup, int messages, int gapMillis) throws Exception {
        String plainThere = topic + ".plain-there";
        String containerThere = topic + ".container-there";
        String arrival = topic + ".echoed";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
            admin.createTopics(List.of(new NewTopic(plainThere, 1, (short) 1), new NewTopic(containerThere, 1, (short) 1),
                    new NewTopic(arrival, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        long sequence = 0;
        for (int gap : new int[] {0, gapMillis}) {
            for (int turn = 0; turn < 2; turn++) {
                for (boolean container : new boolean[] {false, true}) {
                    try (Hop hop = new Hop(arrival, container ? containerThere : plainThere, false, container)) {
                        pingPong(hop, sequence, warmup / 4, gap);
                        sequence += warmup / 4;
                        report("round trip, echo " + (container ? "by a listener container" : "by a consumer thread")
                                + ", " + gap + " ms idle before each, turn " + (turn + 1),
                                pingPong(hop, sequence, messages, gap));
                        sequence += messages;
                    }
                }
            }
        }
    }

    /**
     * A listener container as {@code io.mstar.controlplane.ControlInboxes} builds one (own group, positioned at the
     * end on assignment, time-based asynchronous commits, error-handling deserializer), sending each record on.
     */
    private ConcurrentMessageListenerContainer<Long, byte[]> echoContainer(String from, String to,
            KafkaProducer<Long, byte[]> echoProducer) throws InterruptedException {
        Map<String, Object> props = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG, "mstar-bench-roundtrip-container-" + from,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, ControlClientSettings.CONSUMER_SESSION_TIMEOUT_MS,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, ControlClientSettings.CONSUMER_SESSION_TIMEOUT_MS / 3);
        DefaultKafkaConsumerFactory<Long, byte[]> consumers = new DefaultKafkaConsumerFactory<>(props,
                LongDeserializer::new, () -> new ErrorHandlingDeserializer<>(new ByteArrayDeserializer()));
        ContainerProperties properties = new ContainerProperties(from);
        properties.setAckMode(ContainerProperties.AckMode.TIME);
        properties.setAckTime(ControlClientSettings.CONSUMER_COMMIT_INTERVAL_MS);
        properties.setSyncCommits(false);
        properties.setMessageListener((MessageListener<Long, byte[]>) record -> echoProducer.send(copy(record, to)));
        java.util.concurrent.CountDownLatch assigned = new java.util.concurrent.CountDownLatch(1);
        properties.setConsumerRebalanceListener(new ConsumerAwareRebalanceListener() {
            @Override
            public void onPartitionsAssigned(org.apache.kafka.clients.consumer.Consumer<?, ?> consumer,
                    java.util.Collection<TopicPartition> partitions) {
                consumer.seekToEnd(partitions);
                partitions.forEach(consumer::position);
                assigned.countDown();
            }
        });
        ConcurrentMessageListenerContainer<Long, byte[]> container = new ConcurrentMessageListenerContainer<>(consumers,
                properties);
        container.start();
        if (!assigned.await(RECEIVE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            container.stop();
            throw new IllegalStateException("the listener container got no partition of " + from);
        }
        return container;
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
    public static long percentile(long[] sorted, double fraction) {
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
