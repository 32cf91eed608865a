package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the build puts what the stack runs: the services' exec jars and the classpath files
 * that the e2e-tests build writes (see e2e-tests/pom.xml). Paths are absolute so that a
 * recorded command line stays valid whatever directory {@code bin/mstar} is called from.
 */
public final class ProjectLayout {

    /** System property naming the repository root; bin/mstar and failsafe set it. */
    public static final String REPO_ROOT_PROPERTY = "mstar.repo.root";

    private final Path root;

    private ProjectLayout(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    public static ProjectLayout at(Path root) {
        return new ProjectLayout(root);
    }

    /**
     * The root from {@value #REPO_ROOT_PROPERTY}, else the nearest directory at or above the
     * working directory holding {@code e2e-tests/pom.xml} (a benchmark run from the root).
     */
    public static ProjectLayout discover() {
        String configured = System.getProperty(REPO_ROOT_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return new ProjectLayout(Path.of(configured));
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("e2e-tests/pom.xml"))) {
                return new ProjectLayout(dir);
            }
        }
        throw new StackException("cannot find the repository root: set -D" + REPO_ROOT_PROPERTY
                + " or run from inside the repository");
    }

    public Path root() {
        return root;
    }

    public Path conductorJar() {
        return existing(root.resolve("conductor-service/target/conductor-service-exec.jar"));
    }

    public Path workerJar() {
        return existing(root.resolve("worker-service/target/worker-service-exec.jar"));
    }

    /** The broker JVM's classpath: the broker-only jars, then the Kafka clients' jars. */
    public String brokerClasspath() {
        List<String> entries = new ArrayList<>();
        entries.addAll(classpathFile("broker.classpath"));
        entries.addAll(classpathFile("launcher.classpath"));
        return String.join(java.io.File.pathSeparator, entries);
    }

    /** The project-local state directory of {@code bin/mstar}: {@code <root>/.mstar}. */
    public Path defaultStateDir() {
        return root.resolve(".mstar");
    }

    private List<String> classpathFile(String name) {
        Path file = existing(root.resolve("e2e-tests/target").resolve(name));
        try {
            String content = Files.readString(file).strip();
            if (content.isEmpty()) {
                throw new StackException(file + " is empty: rebuild e2e-tests");
            }
            return List.of(content.split(java.io.File.pathSeparator));
        } catch (IOException e) {
            throw new StackException("cannot read " + file, e);
        }
    }

    private static Path existing(Path path) {
        if (!Files.exists(path)) {
            throw new StackException(path + " does not exist: build it first (mvn -B -DskipTests package)");
        }
        return path;
    }
}
