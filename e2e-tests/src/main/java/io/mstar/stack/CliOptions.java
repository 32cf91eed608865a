package io.mstar.stack;

import java.nio.file.Path;

/** The parsed command line of {@link LocalStackCli}. */
record CliOptions(String command, int workers, int basePort, int conductorPort, String topicPrefix,
                  int timeoutSeconds, Path stateDir) {

    /**
     * Where {@code bin/mstar up} puts the conductor unless told otherwise: a fixed, well-known port, so the
     * README's requests and a user's scripts work without reading the launcher's output first.
     */
    static final int DEFAULT_CONDUCTOR_PORT = 8080;

    static CliOptions parse(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("a command is required");
        }
        String command = args[0];
        if (!command.equals("up") && !command.equals("status") && !command.equals("down")) {
            throw new IllegalArgumentException("unknown command " + command);
        }
        int workers = 2;
        int basePort = 0;
        int conductorPort = DEFAULT_CONDUCTOR_PORT;
        String topicPrefix = "mstar";
        int timeoutSeconds = 180;
        Path stateDir = null;
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
                case "--timeout" -> timeoutSeconds = positive(option, value);
                case "--state-dir" -> stateDir = Path.of(value).toAbsolutePath();
                default -> throw new IllegalArgumentException("unknown option " + option);
            }
        }
        return new CliOptions(command, workers, basePort, conductorPort, topicPrefix, timeoutSeconds, stateDir);
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
