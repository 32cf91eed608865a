package io.mstar.bench;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * The logging of the benchmark drivers run by {@code main} ({@code KafkaRoundTrip}, {@code TransitionLatency},
 * {@code ToyTtsDecode}, {@code MiniLmThroughput}), in one place. Quiet by default: every logger at WARN, the Kafka
 * clients ({@code org.apache.kafka}: each producer, consumer and admin client otherwise dumps its whole
 * configuration at INFO) and Spring ({@code org.springframework}: the listener containers) included, so a driver's
 * output is its measurements. {@code --verbose} puts everything back at INFO.
 *
 * <p>The shaded {@code benchmarks.jar} logs through logback, configured by nothing but Spring Boot's
 * {@code RootLogLevelConfigurator} (root at INFO, console appender); the levels are set here on logback's logger
 * context. With slf4j-simple on the class path instead (a driver run from an IDE with another class path), the same
 * levels go in as its system properties, which is why this must run before the first logger is made. The JMH
 * benchmarks log nothing and are left alone; the service processes a driver starts log to their own files.
 */
public final class DriverLogging {

    /** The option that keeps the INFO chatter. */
    public static final String VERBOSE = "--verbose";

    private static final List<String> CHATTY = List.of("org.apache.kafka", "org.springframework");

    private DriverLogging() {
    }

    /**
     * Sets the levels for this run and returns {@code args} without {@value #VERBOSE}, for the driver's own parser.
     * Call first thing in {@code main}.
     */
    public static String[] configure(String[] args) {
        List<String> rest = new ArrayList<>();
        boolean verbose = false;
        for (String arg : args) {
            if (arg.equals(VERBOSE)) {
                verbose = true;
            } else {
                rest.add(arg);
            }
        }
        apply(verbose);
        return rest.toArray(String[]::new);
    }

    private static void apply(boolean verbose) {
        String level = verbose ? "info" : "warn";
        // slf4j-simple reads these once, when its first logger is made; an explicit -D on the command line wins.
        System.getProperties().putIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", level);
        CHATTY.forEach(name -> System.getProperties().putIfAbsent("org.slf4j.simpleLogger.log." + name, level));

        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof ch.qos.logback.classic.LoggerContext logback) {
            ch.qos.logback.classic.Level logbackLevel = verbose ? ch.qos.logback.classic.Level.INFO
                    : ch.qos.logback.classic.Level.WARN;
            logback.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(logbackLevel);
            CHATTY.forEach(name -> logback.getLogger(name).setLevel(logbackLevel));
        }
    }
}
