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

/**
 * {@code <run dir>/<name>.pid}: a process the stack started, kept so that a later CLI run can
 * report and stop it. Holds the command line as well as the PID because a PID is reused after
 * its process ends: {@link #liveHandle()} only answers for a process whose arguments are still
 * the recorded ones, so {@code down} never signals a stranger that inherited the number.
 *
 * <p>Format: {@code pid=N}, {@code name=...}, {@code probe=...} (an http URL, or
 * {@code kafka:host:port}), then a line {@code command:} and one argument per line.
 */
public record ProcessRecord(String name, long pid, String probe, List<String> command) {

    private static final String SUFFIX = ".pid";
    private static final String KAFKA_PROBE = "kafka:";

    public ProcessRecord {
        command = List.copyOf(command);
    }

    static ProcessRecord ofService(ServiceProcess service) {
        return new ProcessRecord(service.name(), service.process().pid(), service.readinessUrl(),
                service.process().command());
    }

    static ProcessRecord ofBroker(KafkaBroker broker) {
        return new ProcessRecord("kafka", broker.process().pid(), KAFKA_PROBE + broker.bootstrapServers(),
                broker.process().command());
    }

    public Path file(Path runDir) {
        return runDir.resolve(name + SUFFIX);
    }

    public void write(Path runDir) {
        StringBuilder text = new StringBuilder()
                .append("pid=").append(pid).append('\n')
                .append("name=").append(name).append('\n')
                .append("probe=").append(probe).append('\n')
                .append("command:\n");
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
        for (String line : lines.subList(0, commandAt)) {
            int eq = line.indexOf('=');
            String key = eq < 0 ? line : line.substring(0, eq);
            String value = eq < 0 ? "" : line.substring(eq + 1);
            switch (key) {
                case "pid" -> pid = value;
                case "name" -> name = value;
                case "probe" -> probe = value;
                default -> {
                    // Unknown keys are ignored: a newer CLI may add some.
                }
            }
        }
        if (pid == null || name == null || probe == null) {
            throw new StackException(file + " lacks pid, name or probe");
        }
        return new ProcessRecord(name, Long.parseLong(pid), probe, lines.subList(commandAt + 1, lines.size()));
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

    /** Stops the process if it is still the recorded one; true when it was running. */
    public boolean stop(Duration grace) {
        Optional<ProcessHandle> handle = liveHandle();
        handle.ifPresent(h -> ManagedProcess.stop(h, name, grace));
        return handle.isPresent();
    }
}
