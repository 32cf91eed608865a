package io.mstar.stack;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * A whole M* deployment on this machine: one real Kafka broker, the conductor and N workers,
 * each its own process, sharing one deployment config. Everything lives under a state
 * directory: {@code logs/<process>.log}, {@code run/<process>.pid}, {@code kafka-data/},
 * {@code deployment.yaml}.
 *
 * <p>{@link #close()} stops exactly what this instance started. A JVM shutdown hook does the
 * same if the owner never gets to call it (a test JVM killed by Ctrl-C, {@code bin/mstar up}
 * interrupted); {@link #detach()} drops the hook once processes are meant to outlive this JVM.
 */
public final class LocalStack implements AutoCloseable {

    private final Builder settings;
    private final Path runDir;
    private final List<ServiceProcess> services = new ArrayList<>();
    private final Thread shutdownHook;
    /** Set once stopping began; written under {@code this} so no process starts after it. */
    private volatile boolean stopping;
    private KafkaBroker broker;
    private SecretFile adminToken;
    private SecretFile dataPlaneSecret;
    private ServiceProcess conductor;
    private final List<ServiceProcess> workers = new ArrayList<>();

    private LocalStack(Builder settings) {
        this.settings = settings;
        this.runDir = settings.stateDir.resolve("run");
        this.shutdownHook = new Thread(this::stopAll, "mstar-stack-shutdown");
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the broker, waits for it, then starts the conductor and the workers together; each
     * process's record is written as soon as it exists, so an interrupted start leaves nothing
     * that {@code down} cannot find. On any failure stops what it started and rethrows.
     */
    private void launch() {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            keepPreviousLogs();
            LoopbackPorts ports = new LoopbackPorts();
            startBroker(ports);
            settings.progress.accept("starting kafka on " + broker.bootstrapServers());
            broker.awaitReady();

            // a user's file is served where it lies, so that the ONNX files it names relative to itself resolve
            Path deploymentConfig = settings.deploymentFile != null ? settings.deploymentFile
                    : settings.deploymentYaml != null
                    ? DeploymentConfigFile.write(settings.stateDir.resolve("deployment.yaml"), settings.deploymentYaml)
                    : DeploymentConfigFile.write(settings.stateDir.resolve("deployment.yaml"), settings.workers,
                            settings.admission);
            List<String> common = new ArrayList<>(List.of(
                    "--spring.kafka.bootstrap-servers=" + broker.bootstrapServers(),
                    "--mstar.deployment.config=" + deploymentConfig,
                    "--mstar.messaging.topic-prefix=" + settings.topicPrefix));
            dataPlaneSecret = SecretFile.write(settings.stateDir.resolve(SecretFile.DATA_PLANE_SECRET));
            common.add("--mstar.data-plane.secret-file=" + dataPlaneSecret.file());
            common.addAll(settings.serviceArgs);
            adminToken = SecretFile.write(settings.stateDir.resolve(SecretFile.ADMIN_TOKEN));
            List<String> conductorArgs = new ArrayList<>(common);
            conductorArgs.add("--mstar.conductor.admin.token-file=" + adminToken.file());
            conductorArgs.add("--mstar.conductor.data.bind-address=" + settings.bindAddress);
            conductor = startService("conductor", settings.layout.conductorJar(),
                    ports.orFree(settings.conductorPort), conductorArgs);
            for (int n = 0; n < settings.workers; n++) {
                int port = settings.workerBasePort > 0 ? settings.workerBasePort + n : ports.orFree(0);
                List<String> args = new ArrayList<>(common);
                args.add("--mstar.worker.id=" + n);
                args.add("--mstar.worker.data.bind-address=" + settings.bindAddress);
                // the local workers share this machine's GPUs: NCCL refuses two ranks of a group on one GPU
                args.add("--mstar.worker.tensor-parallel.gpu-collective=shared-memory");
                workers.add(startService("worker-" + n, settings.layout.workerJar(), port, args));
            }
            awaitReady();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private synchronized void startBroker(LoopbackPorts ports) {
        refuseWhenStopping();
        broker = KafkaBroker.launch(settings.layout, new KafkaBroker.Settings(
                settings.stateDir.resolve("kafka-data"), logFile("kafka"), settings.kafkaPort,
                settings.kafkaControllerPort, settings.readyTimeout, Duration.ofSeconds(30)), ports);
        ProcessRecord.ofBroker(broker).write(runDir);
    }

    /** A shutdown hook may be stopping the stack while the starting thread goes on. */
    private void refuseWhenStopping() {
        if (stopping) {
            throw new StackException("the local stack is being stopped");
        }
    }

    private synchronized ServiceProcess startService(String name, Path jar, int port, List<String> args) {
        refuseWhenStopping();
        ServiceProcess service = ServiceProcess.start(new ServiceProcess.Spec(name, jar, port, settings.bindAddress,
                args, settings.serviceJvmOptions, logFile(name), settings.stateDir, Duration.ofSeconds(30)));
        services.add(service);
        ProcessRecord.ofService(service).write(runDir);
        return service;
    }

    /** One run per log file; the run before stays in {@code logs/previous/} for comparison. */
    private void keepPreviousLogs() {
        Path logs = settings.stateDir.resolve("logs");
        Path previous = logs.resolve("previous");
        try {
            KafkaBroker.deleteRecursively(previous);
            if (!java.nio.file.Files.isDirectory(logs)) {
                return;
            }
            java.nio.file.Files.createDirectories(previous);
            try (var files = java.nio.file.Files.newDirectoryStream(logs, "*.log")) {
                for (Path log : files) {
                    java.nio.file.Files.move(log, previous.resolve(log.getFileName()));
                }
            }
        } catch (java.io.IOException e) {
            throw new StackException("cannot rotate the logs in " + logs, e);
        }
    }

    private Path logFile(String process) {
        return settings.stateDir.resolve("logs").resolve(process + ".log");
    }

    /** Waits until every service answers readiness 200, reporting who is still starting. */
    private void awaitReady() {
        Instant start = Instant.now();
        Instant deadline = start.plus(settings.readyTimeout);
        List<ServiceProcess> pending = new ArrayList<>(services);
        while (true) {
            if (stopping) {
                // The shutdown hook (Ctrl-C) is stopping everything: a dying service is expected.
                throw new StackException("interrupted; stopping every process it had started");
            }
            pending.removeIf(ServiceProcess::isReady);
            if (pending.isEmpty()) {
                settings.progress.accept("ready after " + Duration.between(start, Instant.now()).toSeconds() + " s");
                return;
            }
            if (!stopping) {
                pending.forEach(ServiceProcess::checkAlive);
            }
            if (Instant.now().isAfter(deadline)) {
                throw pending.get(0).notReadyIn(settings.readyTimeout);
            }
            settings.progress.accept("waiting for " + pending.stream().map(ServiceProcess::name)
                    .collect(Collectors.joining(", ")) + " (" + Duration.between(start, Instant.now()).toSeconds() + " s)");
            Pause.of(Duration.ofMillis(500));
        }
    }

    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    public String topicPrefix() {
        return settings.topicPrefix;
    }

    public KafkaBroker broker() {
        return broker;
    }

    public ServiceProcess conductor() {
        return conductor;
    }

    /** The bearer token of the conductor's admin API, freshly generated for this stack. */
    public SecretFile adminToken() {
        return adminToken;
    }

    /** The secret every service of this stack signs and checks tensor read grants with, fresh for this stack. */
    public SecretFile dataPlaneSecret() {
        return dataPlaneSecret;
    }

    /** SIGKILL of worker {@code n}, as a crashed pod; its record stays so {@code down} still finds it. */
    public synchronized void killWorker(int n) {
        workers.get(n).process().kill();
    }

    /** Starts worker {@code n} again after {@link #killWorker}; does not wait for readiness. */
    public synchronized ServiceProcess restartWorker(int n) {
        refuseWhenStopping();
        ServiceProcess old = workers.get(n);
        ServiceProcess fresh = old.restart();
        services.set(services.indexOf(old), fresh);
        workers.set(n, fresh);
        ProcessRecord.ofService(fresh).write(runDir);
        return fresh;
    }

    /**
     * A graceful stop of the broker, {@code downFor} without it, and a start on the same ports and data; returns once it
     * serves again.
     */
    public synchronized void restartBroker(Duration downFor) {
        refuseWhenStopping();
        broker.restart(downFor);
        ProcessRecord.ofBroker(broker).write(runDir);
    }

    /** SIGKILL of the conductor, as a crashed pod; its record stays so {@code down} still finds it. */
    public synchronized void killConductor() {
        conductor.process().kill();
    }

    /** Starts the conductor again after {@link #killConductor}; does not wait for readiness. */
    public synchronized ServiceProcess restartConductor() {
        refuseWhenStopping();
        ServiceProcess fresh = conductor.restart();
        services.set(services.indexOf(conductor), fresh);
        conductor = fresh;
        ProcessRecord.ofService(fresh).write(runDir);
        return fresh;
    }

    public List<ServiceProcess> workers() {
        return List.copyOf(workers);
    }

    /** Every process this stack started, services first. */
    public List<ManagedProcess> processes() {
        List<ManagedProcess> all = new ArrayList<>();
        services.forEach(s -> all.add(s.process()));
        Optional.ofNullable(broker).ifPresent(b -> all.add(b.process()));
        return all;
    }

    public Path stateDir() {
        return settings.stateDir;
    }

    /** Lets the processes outlive this JVM: {@code bin/mstar up} calls this once all are ready. */
    public void detach() {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
    }

    /** Stops the services together, then the broker they talk to, and removes their records. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // Called from the hook itself or during JVM shutdown: the hook is running this anyway.
        }
        stopAll();
    }

    private synchronized void stopAll() {
        stopping = true;
        if (Thread.currentThread() == shutdownHook && !processes().isEmpty()) {
            settings.progress.accept("\ninterrupted: stopping the " + processes().size() + " processes started so far");
        }
        List<RuntimeException> failures = new ArrayList<>(ParallelStop.stopEach(services, "mstar-stack-stop-",
                ServiceProcess::name, service -> {
                    service.close();
                    ProcessRecord.ofService(service).delete(runDir);
                }));
        services.clear();
        if (broker != null) {
            try {
                broker.close();
                ProcessRecord.ofBroker(broker).delete(runDir);
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        if (!failures.isEmpty()) {
            StackException failure = new StackException("stopping the local stack failed");
            failures.forEach(failure::addSuppressed);
            throw failure;
        }
    }

    /** Options of a stack; every port 0 means "a free one". */
    public static final class Builder {
        private ProjectLayout layout;
        private Path stateDir;
        private int workers = 2;
        private int kafkaPort;
        private int kafkaControllerPort;
        private int conductorPort;
        private int workerBasePort;
        private String topicPrefix = "mstar";
        private String bindAddress = "127.0.0.1";
        private DeploymentConfigFile.Admission admission;
        private Duration readyTimeout = Duration.ofSeconds(180);
        private Consumer<String> progress = line -> { };
        private List<String> serviceArgs = List.of();
        private List<String> serviceJvmOptions = List.of();
        private String deploymentYaml;
        private Path deploymentFile;

        private Builder() {
        }

        public Builder layout(ProjectLayout layout) {
            this.layout = layout;
            return this;
        }

        /** Logs, pid records, broker data and the deployment config go here. */
        public Builder stateDir(Path stateDir) {
            this.stateDir = stateDir.toAbsolutePath().normalize();
            return this;
        }

        public Builder workers(int workers) {
            if (workers < 1) {
                throw new IllegalArgumentException("workers must be at least 1, not " + workers);
            }
            this.workers = workers;
            return this;
        }

        public Builder kafkaPorts(int port, int controllerPort) {
            this.kafkaPort = port;
            this.kafkaControllerPort = controllerPort;
            return this;
        }

        public Builder conductorPort(int port) {
            this.conductorPort = port;
            return this;
        }

        /** Worker n listens on {@code port + n}. */
        public Builder workerBasePort(int port) {
            this.workerBasePort = port;
            return this;
        }

        /** Deployment-wide admission limits instead of the services' defaults (64 running, 256 queued). */
        public Builder admission(int maxConcurrentRequests, int maxQueuedRequests) {
            this.admission = new DeploymentConfigFile.Admission(maxConcurrentRequests, maxQueuedRequests);
            return this;
        }

        /**
         * What the services' HTTP servers and tensor servers bind (default {@code 127.0.0.1}); the broker stays on
         * loopback, since a local stack's clients are its own services.
         */
        public Builder bindAddress(String bindAddress) {
            this.bindAddress = java.util.Objects.requireNonNull(bindAddress, "bindAddress");
            return this;
        }

        public Builder topicPrefix(String topicPrefix) {
            this.topicPrefix = topicPrefix;
            return this;
        }

        /** For the broker and, separately, for all services together. */
        public Builder readyTimeout(Duration readyTimeout) {
            this.readyTimeout = readyTimeout;
            return this;
        }

        /**
         * The deployment config to serve instead of the generated counter one; it must place nodes only on workers
         * {@code 0 .. workers - 1} (admission settings then come from it too).
         */
        public Builder deploymentYaml(String yaml) {
            this.deploymentYaml = yaml;
            return this;
        }

        /**
         * A deployment config file of the user's, served as it is ({@code bin/mstar up --deployment FILE}); like
         * {@link #deploymentYaml}, it must place nodes only on workers {@code 0 .. workers - 1}.
         */
        public Builder deploymentFile(Path file) {
            this.deploymentFile = file.toAbsolutePath();
            return this;
        }

        /** Extra Spring arguments ({@code --name=value}) for every service, e.g. histogram buckets for a benchmark. */
        public Builder serviceArgs(List<String> serviceArgs) {
            this.serviceArgs = List.copyOf(serviceArgs);
            return this;
        }

        /**
         * Extra JVM options for the conductor and every worker (not the broker), e.g. {@code -XX:TieredStopAtLevel=1}
         * for stacks that live for a test class and are mostly starting up.
         */
        public Builder serviceJvmOptions(List<String> serviceJvmOptions) {
            this.serviceJvmOptions = List.copyOf(serviceJvmOptions);
            return this;
        }

        /** Receives one line per poll while waiting; called on the starting thread. */
        public Builder progress(Consumer<String> progress) {
            this.progress = progress;
            return this;
        }

        /** Starts everything and returns once all of it is ready. */
        public LocalStack start() {
            if (layout == null) {
                layout = ProjectLayout.discover();
            }
            if (stateDir == null) {
                throw new IllegalStateException("stateDir is required");
            }
            LocalStack stack = new LocalStack(this);
            stack.launch();
            return stack;
        }
    }
}
