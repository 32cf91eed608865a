package io.mstar.stack;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Command lines for child JVMs. They run on the same Java as this process (by absolute path, so
 * a recorded command line matches what {@code /proc} later reports) with a small heap and the
 * serial collector: four JVMs share two cores here, and parallel GC threads would fight.
 */
final class JavaCommand {

    /**
     * Every child JVM's options before its own: a heap cap (four JVMs plus the build stay far inside 24 GiB), the
     * serial collector, and no display.
     */
    static final List<String> BASE_OPTIONS = List.of("-Xmx512m", "-XX:+UseSerialGC", "-Djava.awt.headless=true");

    private JavaCommand() {
    }

    static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * {@code classpathArgs}: a java launcher argument file holding the {@code -cp} option; {@code jvmOptions} follow
     * {@link #BASE_OPTIONS}.
     */
    static List<String> mainClass(Path classpathArgs, String mainClass, List<String> jvmOptions, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(BASE_OPTIONS);
        command.addAll(jvmOptions);
        command.add("@" + classpathArgs);
        command.add(mainClass);
        command.addAll(args);
        return command;
    }

    /** {@code jvmOptions} follow {@link #BASE_OPTIONS}. */
    static List<String> jar(Path jar, List<String> jvmOptions, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(javaExecutable());
        command.addAll(BASE_OPTIONS);
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(args);
        return command;
    }
}
