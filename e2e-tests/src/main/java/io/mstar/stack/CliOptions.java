package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The parsed command line of {@link LocalStackCli}. {@code given} names the options the command line set explicitly
 * ({@code --workers} ...), so a later {@code up} can tell a deliberate change from a default.
 */
record CliOptions(String command, int workers, int basePort, int conductorPort, String topicPrefix,
                  String bindAddress, int timeoutSeconds, Path stateDir, Path deployment, Set<String> given) {

    /** What every service listener binds unless {@code --bind} says otherwise: a developer's stack is no server. */
    static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";

    /**
     * Where {@code bin/mstar up} puts the conductor unless told otherwise: a fixed, well-known port, so the
     * README's requests and a user's scripts work without reading the launcher's output first.
     */
    static final int DEFAULT_CONDUCTOR_PORT = 8080;

    static final List<String> COMMANDS = List.of("up", "status", "down", "help");

    /** {@code <run dir>/up.options}: the options of the {@code up} that started the recorded stack. */
    static final String RECORD_FILE = "up.options";

    /** The options that shape a stack; a later {@code up} restarts dead processes as they were, not with new ones. */
    private static final List<String> STACK_SHAPE = List.of("--workers", "--base-port", "--conductor-port",
            "--topic-prefix", "--bind", "--deployment");

    CliOptions {
        given = Set.copyOf(given);
    }

    static CliOptions parse(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("a command is required");
        }
        for (String arg : args) {
            // `bin/mstar up --help` explains itself rather than complaining that --help needs a value.
            if (arg.equals("--help") || arg.equals("-h")) {
                return defaults("help");
            }
        }
        String command = args[0];
        if (!COMMANDS.contains(command)) {
            throw new IllegalArgumentException("unknown command " + command);
        }
        int workers = 2;
        int basePort = 0;
        int conductorPort = DEFAULT_CONDUCTOR_PORT;
        String topicPrefix = "mstar";
        String bindAddress = DEFAULT_BIND_ADDRESS;
        int timeoutSeconds = 180;
        Path stateDir = null;
        Path deployment = null;
        Set<String> given = new LinkedHashSet<>();
        for (int i = 1; i < args.length; i++) {
            String option = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            String value = args[++i];
            switch (option) {
                case "--workers" -> workers = positive(option, value);
                case "--base-port" -> basePort = positive(option, value);
                case "--conductor-port" -> conductorPort = nonNegative(option, value);
                case "--topic-prefix" -> topicPrefix = value;
                case "--bind" -> bindAddress = address(option, value);
                case "--timeout" -> timeoutSeconds = positive(option, value);
                case "--state-dir" -> stateDir = Path.of(value).toAbsolutePath();
                case "--deployment" -> deployment = Path.of(value).toAbsolutePath().normalize();
                default -> throw new IllegalArgumentException("unknown option " + option);
            }
            given.add(option);
        }
        return new CliOptions(command, workers, basePort, conductorPort, topicPrefix, bindAddress, timeoutSeconds,
                stateDir, deployment, given);
    }

    private static CliOptions defaults(String command) {
        return new CliOptions(command, 2, 0, DEFAULT_CONDUCTOR_PORT, "mstar", DEFAULT_BIND_ADDRESS, 180, null,
                null, Set.of());
    }

    /** These options with {@code workers} workers, as if the command line had said so. */
    CliOptions withWorkers(int workers) {
        Set<String> options = new LinkedHashSet<>(given);
        options.add("--workers");
        return new CliOptions(command, workers, basePort, conductorPort, topicPrefix, bindAddress, timeoutSeconds,
                stateDir, deployment, options);
    }

    /** Writes the stack-shaping options (and the timeout) to {@code <runDir>/up.options}. */
    void record(Path runDir) {
        StringBuilder text = new StringBuilder(
                "# The options of the bin/mstar up that started this stack; a later up restarts dead processes with them.\n");
        values().forEach((option, value) -> text.append(option.substring(2)).append('=').append(value).append('\n'));
        try {
            Files.createDirectories(runDir);
            Path tmp = runDir.resolve(RECORD_FILE + ".tmp");
            Files.writeString(tmp, text);
            Files.move(tmp, runDir.resolve(RECORD_FILE), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new StackException("cannot write " + runDir.resolve(RECORD_FILE), e);
        }
    }

    /** The options {@link #record} wrote, if any; empty for a stack started by a launcher that did not record them. */
    static Optional<CliOptions> recorded(Path runDir) {
        Path file = runDir.resolve(RECORD_FILE);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        List<String> args = new ArrayList<>(List.of("up"));
        try {
            for (String line : Files.readAllLines(file)) {
                int eq = line.indexOf('=');
                if (line.startsWith("#") || eq < 0) {
                    continue;
                }
                String option = "--" + line.substring(0, eq);
                String value = line.substring(eq + 1);
                // Unknown keys are skipped: a newer launcher may record more. Base port 0 is "none", the default.
                boolean known = STACK_SHAPE.contains(option) || option.equals("--timeout");
                boolean none = option.equals("--base-port") && value.equals("0")
                        || option.equals("--deployment") && value.isEmpty();
                if (known && !none) {
                    args.add(option);
                    args.add(value);
                }
            }
            return Optional.of(parse(args.toArray(String[]::new)));
        } catch (IOException | IllegalArgumentException e) {
            throw new StackException("cannot read " + file + " (" + e.getMessage() + "); run bin/mstar down first", e);
        }
    }

    static void forget(Path runDir) {
        try {
            Files.deleteIfExists(runDir.resolve(RECORD_FILE));
        } catch (IOException e) {
            throw new StackException("cannot delete " + runDir.resolve(RECORD_FILE), e);
        }
    }

    /**
     * The stack-shaping options this command line gave explicitly with another value than {@code recorded}, as
     * {@code --workers 3 (the stack has 2)}; what it left out is no conflict.
     */
    List<String> conflictsWith(CliOptions recorded) {
        Map<String, String> mine = values();
        Map<String, String> theirs = recorded.values();
        List<String> conflicts = new ArrayList<>();
        for (String option : STACK_SHAPE) {
            if (given.contains(option) && !mine.get(option).equals(theirs.get(option))) {
                conflicts.add(option + " " + mine.get(option) + " (the stack has " + theirs.get(option) + ")");
            }
        }
        return conflicts;
    }

    private Map<String, String> values() {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("--workers", Integer.toString(workers));
        values.put("--base-port", Integer.toString(basePort));
        values.put("--conductor-port", Integer.toString(conductorPort));
        values.put("--topic-prefix", topicPrefix);
        values.put("--bind", bindAddress);
        values.put("--timeout", Integer.toString(timeoutSeconds));
        values.put("--deployment", deployment == null ? "" : deployment.toString());
        return values;
    }

    /** An IP address literal (no name lookup: {@code --bind} names an interface, not a host). */
    private static String address(String option, String value) {
        if (!value.matches("[0-9.]+|[0-9a-fA-F:]+")) {
            throw new IllegalArgumentException(option + " needs an IP address such as 127.0.0.1 or 0.0.0.0, not " + value);
        }
        return value;
    }

    private static int nonNegative(String option, String value) {
        return "0".equals(value) ? 0 : positive(option, value);
    }

    private static int positive(String option, String value) {
        try {
            int parsed = Integer.parseInt(value);
            if (parsed > 0) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // Falls through to the message below.
        }
        throw new IllegalArgumentException(option + " needs a positive integer, not " + value);
    }
}
