package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One real local stack per test class: register it as a static field with
 * {@code @RegisterExtension}. Its state directory is {@code e2e-tests/target/e2e-stacks/<class>},
 * kept after the run so that a failure's process logs can be read. It holds one {@link #client()} of the
 * conductor for the class; with {@link #backToBaselineAfterEach} every test is followed by {@link Leaks#awaitBaseline}.
 * After the class it stops everything and fails the class if any process it started is still alive.
 */
public final class LocalStackExtension implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

    private final int workers;
    private int[] admission;
    private String deploymentYaml;
    private Path deploymentFile;
    private List<String> serviceArgs = List.of();
    private Duration baselineSettle;
    private LocalStack stack;
    private MstarClient client;
    private List<ManagedProcess> started = List.of();

    private LocalStackExtension(int workers) {
        this.workers = workers;
    }

    public static LocalStackExtension withWorkers(int workers) {
        return new LocalStackExtension(workers);
    }

    /** Admission limits for this class's stack (see {@link LocalStack.Builder#admission}). */
    public LocalStackExtension admission(int maxConcurrentRequests, int maxQueuedRequests) {
        this.admission = new int[] {maxConcurrentRequests, maxQueuedRequests};
        return this;
    }

    /** The deployment config this class's stack serves (see {@link LocalStack.Builder#deploymentYaml}). */
    public LocalStackExtension deployment(String yaml) {
        this.deploymentYaml = yaml;
        return this;
    }

    /** A deployment config file served where it lies, relative to the project root (see {@link LocalStack.Builder#deploymentFile}). */
    public LocalStackExtension deploymentFile(String relativeToRoot) {
        this.deploymentFile = Path.of(relativeToRoot);
        return this;
    }

    /** Extra Spring arguments for every service of this class's stack (see {@link LocalStack.Builder#serviceArgs}). */
    public LocalStackExtension serviceArgs(String... args) {
        this.serviceArgs = List.of(args);
        return this;
    }

    /** After each test, every process back to its baseline within {@code settle} (see {@link Leaks#awaitBaseline}). */
    public LocalStackExtension backToBaselineAfterEach(Duration settle) {
        this.baselineSettle = settle;
        return this;
    }

    /** A client of this stack's conductor, for the whole class; the extension closes it. */
    public MstarClient client() {
        stack();
        return client;
    }

    public LocalStack stack() {
        if (stack == null) {
            throw new IllegalStateException("the local stack is started before the first test of the class");
        }
        return stack;
    }

    /**
     * A stack for a test: its services compile with C1 alone. A test's stack lives for a class, mostly starting up
     * and warming, and four JVMs share two cores; C2 compiling in all of them cost more than it returned (on two
     * cores: a stack ready in 25 s rather than 33, the soak in 43 s rather than 74).
     */
    static LocalStack.Builder testStack() {
        return LocalStack.builder().serviceJvmOptions(List.of("-XX:TieredStopAtLevel=1"));
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        ProjectLayout layout = ProjectLayout.discover();
        Path stateDir = layout.root().resolve("e2e-tests/target/e2e-stacks")
                .resolve(context.getRequiredTestClass().getSimpleName());
        KafkaBroker.deleteRecursively(stateDir);
        long begin = System.nanoTime();
        LocalStack.Builder builder = testStack()
                .layout(layout)
                .stateDir(stateDir)
                .workers(workers)
                .readyTimeout(Duration.ofSeconds(180));
        if (admission != null) {
            builder.admission(admission[0], admission[1]);
        }
        if (deploymentYaml != null) {
            builder.deploymentYaml(deploymentYaml);
        }
        builder.serviceArgs(serviceArgs);
        if (deploymentFile != null) {
            builder.deploymentFile(layout.root().resolve(deploymentFile));
        }
        stack = builder.start();
        started = stack.processes();
        client = new MstarClient(stack);
        System.out.printf("%s: local stack with %d workers ready in %.1f s (logs in %s)%n",
                context.getRequiredTestClass().getSimpleName(), workers,
                (System.nanoTime() - begin) / 1e9, stateDir.resolve("logs"));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (baselineSettle != null) {
            Leaks.awaitBaseline(stack(), baselineSettle);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (stack == null) {
            return;
        }
        client.close();
        stack.close();
        List<ManagedProcess> survivors = started.stream().filter(ManagedProcess::isAlive).toList();
        if (!survivors.isEmpty()) {
            throw new AssertionError("processes still running after close: "
                    + survivors.stream().map(ManagedProcess::toString).collect(Collectors.joining(", ")));
        }
    }
}
