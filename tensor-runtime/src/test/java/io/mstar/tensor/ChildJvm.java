package io.mstar.tensor;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM running a test main class on this module's test classpath: the real other process of
 * the cross-process tests. Talks line by line over stdin/stdout; stderr is inherited so a child's
 * failure shows in the build log. Closing kills it if it has not exited.
 */
public final class ChildJvm implements AutoCloseable {

    private final Process process;
    private final BufferedReader out;
    private final Writer in;

    private ChildJvm(Process process) {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    public static ChildJvm start(Class<?> main, String... args) throws IOException {
        // surefire's forked JVM runs from a manifest-only booter jar; the real path is in this property
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-cp");
        command.add(classpath);
        command.add(main.getName());
        command.addAll(List.of(args));
        return new ChildJvm(new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start());
    }

    public long pid() {
        return process.pid();
    }

    /** The child's next stdout line; fails if it exits first. */
    public String readLine() throws IOException {
        String line = out.readLine();
        if (line == null) {
            throw new IOException("child " + process.pid() + " closed stdout (exit " + exitCodeOrNull() + ")");
        }
        return line;
    }

    public void send(String line) throws IOException {
        in.write(line);
        in.write('\n');
        in.flush();
    }

    public int waitFor(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("child " + process.pid() + " still running after " + seconds + " s");
        }
        return process.exitValue();
    }

    private Integer exitCodeOrNull() {
        try {
            return process.waitFor(2, TimeUnit.SECONDS) ? process.exitValue() : null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }
}
