package io.mstar.stack;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;

/**
 * A real Apache Kafka broker in KRaft combined mode (broker and controller in one process), as
 * its own JVM started from the jars Maven resolved for e2e-tests. Listens on 127.0.0.1 only.
 * Its data directory is wiped at start: the services seek to the end of their topics on start,
 * so nothing of an earlier run is worth keeping, and a stale cluster id would fail the format.
 */
public final class KafkaBroker implements AutoCloseable {

    /** Where the broker's files go and how long it may take to answer. */
    public record Settings(Path dataDir, Path logFile, int port, int controllerPort,
                           Duration readyTimeout, Duration stopGrace) {

        /** Free ports, 60 s to become ready (about 5 s on an idle machine), 30 s to stop. */
        public static Settings in(Path dataDir, Path logFile) {
            return new Settings(dataDir, logFile, 0, 0, Duration.ofSeconds(60), Duration.ofSeconds(30));
        }

        public Settings withPorts(int port, int controllerPort) {
            return new Settings(dataDir, logFile, port, controllerPort, readyTimeout, stopGrace);
        }
    }

    static final String MAIN_CLASS = "kafka.Kafka";

    private final Settings settings;
    private final int port;
    private final int controllerPort;
    private volatile ManagedProcess process;

    private KafkaBroker(Settings settings, int port, int controllerPort, ManagedProcess process) {
        this.settings = settings;
        this.port = port;
        this.controllerPort = controllerPort;
        this.process = process;
    }

    /** Formats a fresh data directory and starts the broker; does not wait for it. */
    static KafkaBroker launch(ProjectLayout layout, Settings settings, LoopbackPorts ports) {
        int port = ports.orFree(settings.port());
        int controllerPort = ports.orFree(settings.controllerPort());
        String classpath = layout.brokerClasspath();
        Path dataDir = settings.dataDir().toAbsolutePath();
        try {
            deleteRecursively(dataDir);
            Files.createDirectories(dataDir);
            Path serverProperties = dataDir.resolve("server.properties");
            Files.writeString(serverProperties, serverProperties(dataDir, port, controllerPort));
            Path logConfig = dataDir.resolve("log4j2.properties");
            try (InputStream in = KafkaBroker.class.getResourceAsStream("broker-log4j2.properties")) {
                Files.copy(in, logConfig);
            }
            List<String> jvmOptions = List.of("-Dlog4j2.configurationFile=" + logConfig);
            // The classpath goes in an argument file: ~40 jar paths would make the command line
            // unreadable in ps and longer than what ProcessHandle.Info reports.
            Path classpathArgs = dataDir.resolve("classpath.args");
            Files.writeString(classpathArgs, "-cp \"" + classpath + "\"\n");
            format(classpathArgs, jvmOptions, serverProperties, settings.logFile(), dataDir);
            List<String> command = JavaCommand.mainClass(classpathArgs, MAIN_CLASS, jvmOptions,
                    List.of(serverProperties.toString()));
            ManagedProcess process = ManagedProcess.start("kafka", command, dataDir, settings.logFile());
            return new KafkaBroker(settings, port, controllerPort, process);
        } catch (IOException e) {
            throw new StackException("cannot prepare the broker's data directory " + dataDir, e);
        }
    }

    /** Starts the broker and waits until it serves requests. */
    public static KafkaBroker start(ProjectLayout layout, Settings settings) {
        KafkaBroker broker = launch(layout, settings, new LoopbackPorts());
        try {
            broker.awaitReady();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    private static String serverProperties(Path dataDir, int port, int controllerPort) {
        return String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                // Static voters: format without --standalone.
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + dataDir.resolve("log"),
                // One broker: every internal topic must be satisfiable by one replica.
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                // Fewer offsets partitions: the first consumer group waits until all are loaded.
                "offsets.topic.num.partitions=1",
                // Consumers of a fresh group start at once instead of after 3 s.
                "group.initial.rebalance.delay.ms=0",
                // A local stack lives hours, not weeks: keep the data directory small.
                "log.retention.bytes=104857600",
                "log.segment.bytes=16777216",
                "");
    }

    private static void format(Path classpath, List<String> jvmOptions, Path serverProperties,
                               Path logFile, Path dataDir) {
        // What `StorageTool random-uuid` prints, without a JVM start for it.
        String clusterId = Uuid.randomUuid().toString();
        List<String> command = JavaCommand.mainClass(classpath, "kafka.tools.StorageTool", jvmOptions,
                List.of("format", "-t", clusterId, "-c", serverProperties.toString()));
        ManagedProcess formatter = ManagedProcess.start("kafka-storage-format", command, dataDir, logFile);
        if (!formatter.awaitExit(Duration.ofSeconds(60))) {
            formatter.stop(Duration.ofSeconds(5));
            throw new StackException("formatting the broker's storage did not finish in 60 s:\n" + formatter.logTail(30));
        }
        if (formatter.exitCode() != 0) {
            throw new StackException("formatting the broker's storage failed:\n" + formatter.logTail(30));
        }
    }

    /** Polls until the broker describes its cluster; fails with the log tail on death or timeout. */
    public void awaitReady() {
        Instant deadline = Instant.now().plus(settings.readyTimeout());
        while (!isReady()) {
            if (!process.isAlive()) {
                throw new StackException("the Kafka broker " + process.state() + " before becoming ready; "
                        + process.logFile() + " ends with:\n" + process.logTail(40));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new StackException("the Kafka broker did not answer on " + bootstrapServers() + " within "
                        + settings.readyTimeout().toSeconds() + " s; " + process.logFile() + " ends with:\n"
                        + process.logTail(40));
            }
            Pause.of(Duration.ofMillis(250));
        }
    }

    public boolean isReady() {
        return process.isAlive() && KafkaProbe.answers(bootstrapServers(), Duration.ofSeconds(2));
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    public ManagedProcess process() {
        return process;
    }

    /** The client port, as in {@link #bootstrapServers()}. */
    public int port() {
        return port;
    }

    /** The KRaft controller's port. */
    public int controllerPort() {
        return controllerPort;
    }

    Settings settings() {
        return settings;
    }

    /**
     * Stops the broker (SIGTERM, then SIGKILL after the grace period), leaves it down for {@code downFor}, and starts it
     * again on the same ports and data, as a rolling restart of a one-broker cluster does; waits until it serves again.
     */
    public synchronized void restart(Duration downFor) {
        process.stop(settings.stopGrace());
        Pause.of(downFor);
        process = ManagedProcess.start("kafka", process.command(), settings.dataDir().toAbsolutePath(), settings.logFile());
        awaitReady();
    }

    /** Stops the broker (SIGTERM, then SIGKILL after the grace period) and deletes its data. */
    @Override
    public void close() {
        process.stop(settings.stopGrace());
        try {
            deleteRecursively(settings.dataDir());
        } catch (IOException e) {
            throw new StackException("cannot delete the broker's data in " + settings.dataDir(), e);
        }
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
