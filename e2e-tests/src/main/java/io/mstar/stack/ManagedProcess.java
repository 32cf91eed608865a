package io.mstar.stack;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One operating-system process started by the stack, its output appended to one log file.
 * The process is not tied to this JVM: it outlives it unless {@link #stop} is called, which
 * is what lets {@code bin/mstar up} exit while the stack keeps running.
 */
public final class ManagedProcess {

    private final String name;
    private final List<String> command;
    private final Path logFile;
    private final Process process;
    private final ProcessHandle handle;

    private ManagedProcess(String name, List<String> command, Path logFile, Process process) {
        this.name = name;
        this.command = List.copyOf(command);
        this.logFile = logFile;
        this.process = process;
        this.handle = process.toHandle();
    }

    /** Starts {@code command} with stdin closed and stdout and stderr appended to {@code logFile}. */
    public static ManagedProcess start(String name, List<String> command, Path workingDir, Path logFile) {
        try {
            Files.createDirectories(logFile.getParent());
            Process process = new ProcessBuilder(command)
                    .directory(workingDir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .redirectErrorStream(true)
                    .start();
            return new ManagedProcess(name, command, logFile, process);
        } catch (IOException e) {
            throw new StackException("cannot start " + name + ": " + String.join(" ", command), e);
        }
    }

    private static java.io.File nullDevice() {
        return new java.io.File("/dev/null");
    }

    public String name() {
        return name;
    }

    public long pid() {
        return handle.pid();
    }

    public List<String> command() {
        return command;
    }

    public Path logFile() {
        return logFile;
    }

    public boolean isAlive() {
        return handle.isAlive();
    }

    /** "running" or "exited with code N", for error messages. */
    String state() {
        return process.isAlive() ? "running" : "exited with code " + process.exitValue();
    }

    /**
     * Waits up to {@code timeout} for the process to end; true when it has, and then {@link #exitCode} is known.
     * Through the {@link Process}, not its handle: the handle can see the exit before the process's own reaper has
     * recorded it, and {@code exitValue()} then throws "process hasn't exited" (seen once in CI).
     */
    public boolean awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StackException("interrupted waiting for " + name + " to exit", e);
        }
    }

    /** The exit code; only meaningful once {@link #awaitExit} returned true. */
    public int exitCode() {
        return process.exitValue();
    }

    /** SIGTERM, then SIGKILL if still running after {@code grace}; waits until it has gone. */
    public void stop(Duration grace) {
        stop(handle, name, grace);
    }

    /** SIGKILL, no grace: a crash as the platform would see it. Waits until it has gone. */
    public void kill() {
        handle.destroyForcibly();
        if (!waitForExit(handle, Duration.ofSeconds(10))) {
            throw new StackException(name + " (pid " + handle.pid() + ") survived SIGKILL");
        }
    }

    /** Shared with {@link ProcessRecord}, which stops processes started by an earlier CLI run. */
    static void stop(ProcessHandle handle, String name, Duration grace) {
        if (!handle.isAlive()) {
            return;
        }
        handle.destroy();
        if (!waitForExit(handle, grace)) {
            handle.destroyForcibly();
            if (!waitForExit(handle, Duration.ofSeconds(10))) {
                throw new StackException(name + " (pid " + handle.pid() + ") survived SIGKILL");
            }
        }
    }

    private static boolean waitForExit(ProcessHandle handle, Duration timeout) {
        try {
            handle.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new StackException("waiting for pid " + handle.pid() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !handle.isAlive();
        }
    }

    /** The last {@code lines} lines of the log, for error messages; never throws. */
    public String logTail(int lines) {
        return tail(logFile, lines);
    }

    static String tail(Path file, int lines) {
        // Reads only the end: a broker log can grow to megabytes.
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            long length = raf.length();
            int window = (int) Math.min(length, 64 * 1024);
            byte[] bytes = new byte[window];
            raf.seek(length - window);
            raf.readFully(bytes);
            String[] all = new String(bytes, StandardCharsets.UTF_8).split("\n");
            int from = Math.max(0, all.length - lines);
            return String.join("\n", java.util.Arrays.asList(all).subList(from, all.length));
        } catch (IOException e) {
            return "(no log at " + file + ": " + e.getMessage() + ")";
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ")";
    }
}
