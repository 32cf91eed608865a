package io.mstar.helm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** docker/*.Dockerfile pass dockerfile-utils' lint (installed into target/ by the build from docker/lint). */
class DockerfileLintTests {

    private static final Path REPO = Path.of(System.getProperty("mstar.repo.root", "..")).toAbsolutePath().normalize();

    record Lint(int exitCode, String output) {
    }

    private static Lint lint(Path dockerfile) throws IOException, InterruptedException {
        Path linter = Path.of(System.getProperty("mstar.dockerfile.lint.dir", "target/dockerfile-lint"))
                .resolve("node_modules/dockerfile-utils/bin/dockerfile-utils");
        assertThat(linter).as("the build installs the linter (exec-maven-plugin, npm ci)").isRegularFile();
        Process process = new ProcessBuilder("node", linter.toString(), "lint", dockerfile.toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("linter finished").isTrue();
        return new Lint(process.exitValue(), output);
    }

    static List<Path> dockerfiles() throws IOException {
        try (Stream<Path> files = Files.list(REPO.resolve("docker"))) {
            return files.filter(f -> f.getFileName().toString().endsWith(".Dockerfile")).sorted().toList();
        }
    }

    @Test
    void bothServiceImagesHaveADockerfile() throws IOException {
        assertThat(dockerfiles()).extracting(f -> f.getFileName().toString())
                .containsExactly("conductor.Dockerfile", "worker.Dockerfile");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dockerfiles")
    void dockerfileLintsClean(Path dockerfile) throws IOException, InterruptedException {
        Lint result = lint(dockerfile);

        assertThat(result.output()).as(dockerfile.toString()).isBlank();
        assertThat(result.exitCode()).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dockerfiles")
    void imageRunsAsTheNonRootUserTheChartExpects(Path dockerfile) throws IOException {
        List<String> lines = Files.readAllLines(dockerfile);

        // The chart's podSecurityContext pins uid 10001 with runAsNonRoot.
        assertThat(lines).contains("USER 10001");
        assertThat(lines.stream().filter(l -> l.startsWith("USER ")).reduce((a, b) -> b)).contains("USER 10001");
    }

    @Test
    void linterReportsABrokenDockerfile(@TempDir Path dir) throws IOException, InterruptedException {
        Path broken = dir.resolve("broken.Dockerfile");
        Files.writeString(broken, "FROM eclipse-temurin:17-jre\nEXPOSE http\nRUNN true\n");

        Lint result = lint(broken);

        assertThat(result.exitCode()).isNotZero();
        assertThat(result.output()).contains("Invalid containerPort: http").contains("Unknown instruction: RUNN");
    }
}
