package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The conductor's container image (conductor-service/target/jib-image.tar, built by Jib with no daemon on the JRE
 * base of docker/jre-base) is a real image that runs: its layers unpacked into a root file system, its entrypoint
 * run there as its configured user (chroot in a private mount namespace: /proc and /dev/shm mounted only there, so
 * nothing outlives the process), until the service answers its liveness probe.
 */
class ConductorImageTests {

    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private Process running;

    @AfterEach
    void stop() throws InterruptedException {
        if (running != null) {
            running.descendants().forEach(ProcessHandle::destroyForcibly);
            running.destroyForcibly();
            running.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void theImageIsNonRootAndItsEntrypointServesTheConductor() throws Exception {
        Path image = ProjectLayout.discover().root().resolve("conductor-service/target/jib-image.tar");
        assertThat(image).as("built by mvn verify of conductor-service (jib:buildTar)").isRegularFile();
        Path unpacked = Files.createDirectories(dir.resolve("image"));
        run("tar", "--warning=no-unknown-keyword", "-xf", image.toString(), "-C", unpacked.toString());

        JsonNode manifest = MstarClient.JSON.readTree(Files.readString(unpacked.resolve("manifest.json"))).get(0);
        JsonNode config = MstarClient.JSON.readTree(Files.readString(unpacked.resolve(manifest.get("Config").asString())))
                .get("config");
        assertThat(config.get("User").asString()).isEqualTo("10001:10001");
        assertThat(config.get("ExposedPorts").propertyNames()).contains("8080/tcp");
        List<String> entrypoint = new ArrayList<>();
        config.get("Entrypoint").forEach(part -> entrypoint.add(part.asString()));
        assertThat(entrypoint).first().isEqualTo("java");
        assertThat(entrypoint).last().isEqualTo("io.mstar.conductor.ConductorApplication");

        Path rootfs = Files.createDirectories(dir.resolve("rootfs"));
        for (JsonNode layer : manifest.get("Layers")) {
            run("tar", "--warning=no-unknown-keyword", "-xf", unpacked.resolve(layer.asString()).toString(), "-C", rootfs.toString());
        }
        assertThat(rootfs.resolve("opt/java/bin/java")).isExecutable();
        for (String[] node : new String[][] {{"null", "3"}, {"zero", "5"}, {"random", "8"}, {"urandom", "9"}}) {
            run("mknod", "-m", "666", rootfs.resolve("dev/" + node[0]).toString(), "c", "1", node[1]);
        }

        // The data-plane secret as the chart mounts it: a file the image's user alone reads.
        Path secret = Files.createDirectories(rootfs.resolve("etc/mstar/data-plane")).resolve("secret");
        Files.writeString(secret, "image-test-data-plane-secret-0123456789abcdef");
        run("chown", "10001:10001", secret.toString());
        run("chmod", "0400", secret.toString());

        int port = new LoopbackPorts().orFree(0);
        List<String> command = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "--fork", "sh",
                "-c", "mount -t proc proc \"$0/proc\" && mount -t tmpfs shm \"$0/dev/shm\" && exec chroot --userspec=10001:10001 \"$@\"",
                rootfs.toString(), rootfs.toString()));
        command.addAll(entrypoint);
        command.addAll(List.of("--server.port=" + port, "--spring.kafka.bootstrap-servers=127.0.0.1:1",
                "--mstar.data-plane.secret-file=/etc/mstar/data-plane/secret"));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("conductor.log").toFile());
        builder.environment().clear();
        config.get("Env").forEach(e -> {
            String[] kv = e.asString().split("=", 2);
            builder.environment().put(kv[0], kv[1]);
        });
        // The image's PATH finds its java inside the root; the host's sbin finds chroot and mount outside it.
        builder.environment().merge("PATH", "/usr/sbin:/sbin:/usr/bin:/bin", (inImage, onHost) -> inImage + ":" + onHost);
        running = builder.start();

        String base = "http://127.0.0.1:" + port;
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            assertThat(running.isAlive()).as("the container's java is alive; its log:%n%s", log()).isTrue();
            assertThat(HttpProbe.status(base + "/actuator/health/liveness", HTTP_TIMEOUT)).isEqualTo(200);
        });
        // No broker and no workers: alive, but not ready, as a pod would be.
        assertThat(HttpProbe.status(base + "/actuator/health/readiness", HTTP_TIMEOUT)).isEqualTo(503);
        ProcessHandle java = running.descendants().filter(p -> p.info().command().orElse("").endsWith("java"))
                .findFirst().orElseThrow(() -> new AssertionError("no java process under the container"));
        String status = Files.readString(Path.of("/proc/" + java.pid() + "/status"));
        assertThat(status).as("the container runs as its image user").containsPattern("(?m)^Uid:\\s+10001\\s");
        System.out.printf("[image] %s: %d layers, entrypoint %s, live on port %d as uid 10001%n",
                image.getFileName(), manifest.get("Layers").size(), entrypoint.get(0), port);
    }

    private String log() throws IOException {
        Path log = dir.resolve("conductor.log");
        if (!Files.exists(log)) {
            return "";
        }
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
        assertThat(process.exitValue()).as("%s: %s", String.join(" ", command), output).isZero();
    }
}
