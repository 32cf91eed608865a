package io.mstar.stack;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * {@code <run dir>/<name>.pid}: a process the stack started, kept so that a later CLI run can
 * report and stop it. Holds the command line as well as the PID because a PID is reused after
 * its process ends: {@link #liveHandle()} only answers for a process whose arguments are still
 * the recorded ones, so {@code down} never signals a stranger that inherited the number.
 *
 * <p>It also holds what starting the process again takes ({@link #relaunch}, {@code bin/mstar up} after a crash): the
 * working directory, the log file and, for the port checks and the printout, the ports it listens on. The command
 * line itself carries everything else (ports, deployment config, topic prefix, admin token file).
 *
 * <p>Format: {@code pid=N}, {@code name=...}, {@code probe=...} (an http URL, or
 * {@code kafka:host:port}), optionally {@code dir=...}, {@code log=...} and {@code ports=P,Q}, then a line
 * {@code command:} and one argument per line. A record without {@code dir} or {@code log} (an older launcher's)
 * means the state directory's defaults.
 */
public record ProcessRecord(String name, long pid, String probe, List<String> command, Path workingDir, Path logFile,
                            List<Integer> ports) {

    private static final String SUFFIX = ".pid";
    private static final String KAFKA_PROBE = "kafka:";

    public ProcessRecord {
        command = List.copyOf(command);
        ports = List.copyOf(ports);
    }

    /** A record with only what identifies the process (no working directory, log or ports). */
    public ProcessRecord(String name, long pid, String probe, List<String> command) {
        this(name, pid, probe, command, null, null, List.of());
    }

    static ProcessRecord ofService(ServiceProcess service) {
        ServiceProcess.Spec spec = service.spec();
        return new ProcessRecord(service.name(), service.process().pid(), service.readinessUrl(),
                service.process().command(), spec.workingDir().toAbsolutePath(), spec.logFile().toAbsolutePath(),
                List.of(spec.httpPort()));
    }

    static ProcessRecord ofBroker(KafkaBroker broker) {
        KafkaBroker.Settings settings = broker.settings();
        return new ProcessRecord("kafka", broker.process().pid(), KAFKA_PROBE + broker.bootstrapServers(),
                broker.process().command(), settings.dataDir().toAbsolutePath(), settings.logFile().toAbsolutePath(),
                List.of(broker.port(), broker.controllerPort()));
    }

    /** The same record for another process of the same command line (a restart). */
    public ProcessRecord withPid(long newPid) {
        return new ProcessRecord(name, newPid, probe, command, workingDir, logFile, ports);
    }

    public Path file(Path runDir) {
        return runDir.resolve(name + SUFFIX);
    }

    public void write(Path runDir) {
        StringBuilder text = new StringBuilder()
                .append("pid=").append(pid).append('\n')
                .append("name=").append(name).append('\n')
                .append("probe=").append(probe).append('\n');
        if (workingDir != null) {
            text.append("dir=").append(workingDir).append('\n');
        }
        if (logFile != null) {
            text.append("log=").append(logFile).append('\n');
        }
        if (!ports.isEmpty()) {
            text.append("ports=").append(ports.stream().map(String::valueOf).collect(Collectors.joining(","))).append('\n');
        }
        text.append("command:\n");
        command.forEach(arg -> text.append(arg).append('\n'));
        try {
            Files.createDirectories(runDir);
            // Write then rename: a reader never sees half a record.
            Path tmp = runDir.resolve(name + SUFFIX + ".tmp");
            Files.writeString(tmp, text);
            Files.move(tmp, file(runDir), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new StackException("cannot write " + file(runDir), e);
        }
    }

    public void delete(Path runDir) {
        try {
            Files.deleteIfExists(file(runDir));
        } catch (IOException e) {
            throw new StackException("cannot delete " + file(runDir), e);
        }
    }

    /** Every record in {@code runDir}, brokers last so that services are listed and stopped first. */
    public static List<ProcessRecord> readAll(Path runDir) {
        List<ProcessRecord> records = new ArrayList<>();
        if (!Files.isDirectory(runDir)) {
            return records;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(runDir, "*" + SUFFIX)) {
            for (Path file : files) {
                records.add(parse(file));
            }
        } catch (IOException e) {
            throw new StackException("cannot read " + runDir, e);
        }
        records.sort(java.util.Comparator.comparing((ProcessRecord r) -> r.isBroker()).thenComparing(ProcessRecord::name));
        return records;
    }

    static ProcessRecord parse(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        int commandAt = lines.indexOf("command:");
        if (commandAt < 0) {
            throw new StackException(file + " is not a process record (no command: line)");
        }
        String pid = null;
        String name = null;
        String probe = null;
        Path dir = null;
        Path log = null;
        List<Integer> ports = List.of();
        for (String line : lines.subList(0, commandAt)) {
            int eq = line.indexOf('=');
            String key = eq < 0 ? line : line.substring(0, eq);
            String value = eq < 0 ? "" : line.substring(eq + 1);
            switch (key) {
                case "pid" -> pid = value;
                case "name" -> name = value;
                case "probe" -> probe = value;
                case "dir" -> dir = Path.of(value);
                case "log" -> log = Path.of(value);
                case "ports" -> ports = value.isBlank() ? List.of()
                        : Arrays.stream(value.split(",")).map(String::trim).map(Integer::valueOf).toList();
                default -> {
                    // Unknown keys are ignored: a newer CLI may add some.
                }
            }
        }
        if (pid == null || name == null || probe == null) {
            throw new StackException(file + " lacks pid, name or probe");
        }
        return new ProcessRecord(name, Long.parseLong(pid), probe, lines.subList(commandAt + 1, lines.size()), dir, log,
                ports);
    }

    public boolean isBroker() {
        return probe.startsWith(KAFKA_PROBE);
    }

    /** The running process with this PID, only if it still runs the recorded command line. */
    public Optional<ProcessHandle> liveHandle() {
        return ProcessHandle.of(pid)
                .filter(ProcessHandle::isAlive)
                .filter(this::runsRecordedCommand);
    }

    private boolean runsRecordedCommand(ProcessHandle handle) {
        // argv[0] is left out: the kernel may report the executable by another path (symlinks).
        // The arguments (jar path, ports) are specific enough.
        Optional<List<String>> arguments = arguments(handle);
        return arguments.isPresent() && arguments.get().equals(command.subList(1, command.size()));
    }

    /**
     * The process's arguments after argv[0]. Read from /proc where there is one, because
     * {@code ProcessHandle.Info} on Linux reads only the first 4 KiB of the command line and
     * reports no arguments at all beyond that.
     */
    private static Optional<List<String>> arguments(ProcessHandle handle) {
        Path cmdline = Path.of("/proc", Long.toString(handle.pid()), "cmdline");
        if (Files.isReadable(cmdline)) {
            try {
                String raw = Files.readString(cmdline, java.nio.charset.StandardCharsets.UTF_8);
                List<String> argv = Arrays.asList(raw.split("\0", -1));
                // The kernel terminates every argument with NUL, so the split ends in "".
                return Optional.of(argv.subList(1, Math.max(1, argv.size() - 1)));
            } catch (IOException e) {
                return Optional.empty();
            }
        }
        return handle.info().arguments().map(Arrays::asList);
    }

    public boolean isReady() {
        if (liveHandle().isEmpty()) {
            return false;
        }
        if (isBroker()) {
            return KafkaProbe.answers(probe.substring(KAFKA_PROBE.length()), Duration.ofSeconds(2));
        }
        return HttpProbe.status(probe, Duration.ofSeconds(2)) == 200;
    }

    /**
     * Starts the recorded command line again, in the recorded working directory, appending to the recorded log (for an
     * older record: the state directory's defaults), and writes the record of the new process; does not wait for
     * readiness. The caller makes sure the old process is gone.
     */
    public ManagedProcess relaunch(Path runDir) {
        Path stateDir = runDir.toAbsolutePath().getParent();
        Path dir = workingDir != null ? workingDir : isBroker() ? stateDir.resolve("kafka-data") : stateDir;
        if (!Files.isDirectory(dir)) {
            throw new StackException("cannot start " + name + " again: its working directory " + dir
                    + " is gone; run bin/mstar down, then up");
        }
        ManagedProcess process = ManagedProcess.start(name, command, dir, logFile(runDir));
        withPid(process.pid()).write(runDir);
        return process;
    }

    /** Where the process's output goes ({@link #relaunch}'s choice for an older record). */
    public Path logFile(Path runDir) {
        return logFile != null ? logFile : runDir.toAbsolutePath().getParent().resolve("logs").resolve(name + ".log");
    }

    /** Stops the process if it is still the recorded one; true when it was running. */
    public boolean stop(Duration grace) {
        Optional<ProcessHandle> handle = liveHandle();
        handle.ifPresent(h -> ManagedProcess.stop(h, name, grace));
        return handle.isPresent();
    }
}
