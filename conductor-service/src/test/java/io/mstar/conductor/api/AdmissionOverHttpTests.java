package io.mstar.conductor.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.mstar.conductor.lifecycle.AbortReason;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestLifecycle;
import io.mstar.conductor.lifecycle.Submission;

/**
 * Admission over real HTTP with one slot and no queue: a full conductor answers 503 {@code queue_full} with
 * {@code Retry-After} at once; without ready workers 503 {@code no_ready_workers}. Also: the admin API refuses
 * everything without a configured token, the OpenAPI document is served, and the request meters are scraped.
 */
@ConductorOverHttp
class AdmissionOverHttpTests {

    private static final String BODY = "{\"model\":\"counter\",\"inputs\":{\"tokens\":{\"tokens\":[1]}}}";

    @Autowired
    WebTestClient web;
    @Autowired
    LifecycleLoop loop;

    @DynamicPropertySource
    static void deployment(DynamicPropertyRegistry registry) throws IOException {
        Path file = Files.createTempFile("mstar-deployment", ".yaml");
        Files.writeString(file, "max_concurrent_requests: 1\nmax_queued_requests: 0\nmodels:\n  - name: counter\n"
                + "    node_groups:\n      - node_names: [embed, offset, detok]\n        workers: [0]\n"
                + "      - node_names: [count, step]\n        workers: [1]\n");
        file.toFile().deleteOnExit();
        registry.add("mstar.deployment.config", file::toString);
    }

    @BeforeEach
    void clean() {
        loop.askRequests(r -> r.abortAll(AbortReason.ADMIN)).block(Duration.ofSeconds(5));
    }

    @Test
    void withoutReadyWorkersAndWithAFullConductorSubmissionsGet503WithRetryAfterAtOnce() {
        web.post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON).bodyValue(BODY).exchange()
                .expectStatus().isEqualTo(503).expectHeader().valueEquals("Retry-After", "1")
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.error_type").isEqualTo("no_ready_workers");

        PlayedWorkers.controlOnly(loop).setUp();
        loop.askRequests(r -> r.submit(new Submission("slot", "counter", Map.of("tokens",
                new Submission.InputTensor("int32", List.of(1L), new byte[4])), 1, null, Map.of(), null, null)))
                .block(Duration.ofSeconds(5));

        web.post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON).bodyValue(BODY).exchange()
                .expectStatus().isEqualTo(503).expectHeader().valueEquals("Retry-After", "1")
                .expectBody().jsonPath("$.error_type").isEqualTo("queue_full")
                .jsonPath("$.type").isEqualTo("https://mstar.io/problems/queue_full");
        assertThat(loop.requestCounts().inFlight()).isEqualTo(1);
        assertThat(loop.requestCounts().queued()).isZero();

        web.get().uri("/actuator/prometheus").exchange().expectStatus().isOk().expectBody(String.class)
                .value(scrape -> assertThat(scrape).contains("mstar_conductor_requests_in_flight 1.0")
                        .contains("mstar_conductor_requests_queued 0.0")
                        .contains("mstar_conductor_request_queue_seconds_count{model=\"counter\"}")
                        .contains("mstar_conductor_cancellations_total{reason=\"admin\"}")
                        .contains("mstar_conductor_drain_timeouts_total")
                        // The running request's one 4-byte input.
                        .contains("mstar_conductor_tensors_live 1.0")
                        .contains("mstar_conductor_device_memory_used_bytes 4.0"));
        assertThat(loop.askRequests(RequestLifecycle::liveInputTensors).block()).isEqualTo(1);
    }

    @Test
    void withoutAConfiguredTokenTheAdminApiRefusesEverythingAndSaysWhy() {
        web.get().uri("/admin/workers").header("Authorization", "Bearer anything-at-all-here").exchange()
                .expectStatus().isEqualTo(503).expectBody().jsonPath("$.error_type").isEqualTo("admin_disabled")
                .jsonPath("$.detail").value(d -> assertThat((String) d).contains("no admin token configured"));
        web.post().uri("/admin/requests/abort-all").exchange().expectStatus().isEqualTo(503);
    }

    @Test
    void theOpenApiDocumentIsServed() {
        web.get().uri("/openapi.json").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.openapi").isEqualTo("3.0.3")
                .jsonPath("$.paths['/v1/requests'].post").exists()
                .jsonPath("$.paths['/admin/requests/abort-all'].post").exists();
    }
}
