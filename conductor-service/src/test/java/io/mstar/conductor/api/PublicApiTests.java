package io.mstar.conductor.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestLifecycle;
import io.mstar.wire.FailRequests;

/**
 * The public and admin APIs over real HTTP: problem+json with stable types, limits, auth. Worker messages are
 * delivered to the loop in-process (the Kafka path is ConductorControlPlaneTests').
 */
@ConductorOverHttp(properties = {"mstar.conductor.api.max-body-size=4KB", "mstar.conductor.api.max-input-bytes=64B",
        "mstar.conductor.admin.token=" + PublicApiTests.TOKEN})
class PublicApiTests {

    static final String TOKEN = "0123456789abcdef-test-token";

    @Autowired
    WebTestClient web;
    @Autowired
    LifecycleLoop loop;
    @org.springframework.boot.test.web.server.LocalServerPort
    int port;

    private PlayedWorkers workers;

    @BeforeEach
    void workersUp() {
        workers = PlayedWorkers.controlOnly(loop);
        workers.setUp();
    }

    @Test
    void modelsListsCounter() {
        web.get().uri("/v1/models").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.models[0].name").isEqualTo("counter");
    }

    @Test
    void malformedBodiesUnknownModelsAndBadIdsAreProblemJsonWithStableTypes() {
        post("{not json").expectStatus().isBadRequest().expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.error_type").isEqualTo("malformed_request");
        post("{\"model\":\"nope\",\"inputs\":{\"tokens\":{\"tokens\":[1]}}}").expectStatus().isNotFound()
                .expectBody().jsonPath("$.error_type").isEqualTo("unknown_model")
                .jsonPath("$.type").isEqualTo("https://mstar.io/problems/unknown_model");
        post("{\"model\":\"counter\",\"request_id\":\"bad id!\",\"inputs\":{\"tokens\":{\"tokens\":[1]}}}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.error_type").isEqualTo("malformed_request");
        post("{\"model\":\"counter\",\"inputs\":{\"tokens\":{\"text\":\"hi\"}}}").expectStatus().isBadRequest()
                .expectBody().jsonPath("$.error_type").isEqualTo("invalid_input");
        post("{\"model\":\"counter\",\"max_tokens\":0,\"inputs\":{\"tokens\":{\"tokens\":[1]}}}").expectStatus()
                .isBadRequest().expectBody().jsonPath("$.error_type").isEqualTo("invalid_input");
        web.get().uri("/v1/requests/none").exchange().expectStatus().isNotFound().expectBody()
                .jsonPath("$.error_type").isEqualTo("request_not_found");
    }

    @Test
    void oversizedBodiesAndInputsAre413() {
        post("{\"model\":\"counter\",\"inputs\":{\"tokens\":{\"text\":\"" + "x".repeat(5000) + "\"}}}")
                .expectStatus().isEqualTo(413).expectBody().jsonPath("$.error_type").isEqualTo("payload_too_large");
        post("{\"model\":\"counter\",\"inputs\":{\"tokens\":{\"tokens\":[" + "1,".repeat(40) + "1]}}}")
                .expectStatus().isEqualTo(413).expectBody().jsonPath("$.error_type").isEqualTo("payload_too_large");
    }

    @Test
    void aStreamingRequestEndsWithAnErrorChunkWhenAWorkerFailsItAndItsStatusSaysFailed() {
        // Headers go out with the first chunk: fail the request from another thread once it runs.
        Thread failer = new Thread(() -> {
            await().atMost(Duration.ofSeconds(5)).until(() -> loop.askRequests(r -> r.view("s-1")).blockOptional()
                    .map(v -> v.state() == io.mstar.conductor.lifecycle.RequestState.RUNNING).orElse(false));
            workers.deliver(PlayedWorkers.W1, new FailRequests(Map.of("s-1", "boom")));
        });
        failer.start();
        var result = web.post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"request_id\":\"s-1\",\"stream\":true,\"inputs\":{\"tokens\":{\"tokens\":[1,2]}}}")
                .exchange().expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_NDJSON)
                .returnResult(Map.class);
        List<Map> chunks = result.getResponseBody().collectList().block(Duration.ofSeconds(10));
        assertThat(chunks).hasSize(1);
        assertThat(chunks.get(0).get("type")).isEqualTo("error");
        assertThat(((Map<?, ?>) chunks.get(0).get("error")).get("error_type")).isEqualTo("worker_failed");
        web.get().uri("/v1/requests/s-1").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.outcome").isEqualTo("failed").jsonPath("$.error_type").isEqualTo("worker_failed")
                .jsonPath("$.request_id").isEqualTo("s-1");
        loop.askRequests(r -> r.abort("s-1", io.mstar.conductor.lifecycle.AbortReason.ADMIN)).block();
    }

    @Test
    void deleteCancelsARequestAndTheNonStreamingCallerGetsRequestAborted() {
        Thread canceller = new Thread(() -> {
            await().atMost(Duration.ofSeconds(5)).until(() -> loop.askRequests(r -> r.view("c-1")).blockOptional().isPresent());
            web.delete().uri("/v1/requests/c-1").exchange().expectStatus().isAccepted();
        });
        canceller.start();
        var pending = web.post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"request_id\":\"c-1\",\"inputs\":{\"tokens\":{\"tokens\":[1]}}}")
                .exchange();
        pending.expectStatus().isEqualTo(409).expectBody().jsonPath("$.error_type").isEqualTo("request_aborted");
        web.delete().uri("/v1/requests/unknown").exchange().expectStatus().isNotFound();
    }

    @Test
    void adminNeedsTheBearerTokenAndListsAndAborts() {
        web.get().uri("/admin/workers").exchange().expectStatus().isUnauthorized().expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON).expectBody().jsonPath("$.error_type").isEqualTo("unauthorized");
        web.get().uri("/admin/workers").header("Authorization", "Bearer wrong-token-wrong-token").exchange()
                .expectStatus().isForbidden().expectBody().jsonPath("$.error_type").isEqualTo("forbidden");
        web.get().uri("/admin/workers").header("Authorization", "Bearer " + TOKEN).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.workers.worker-0.state").isEqualTo("ready");
        loop.askRequests(r -> r.submit(new io.mstar.conductor.lifecycle.Submission("adm-1", "counter", Map.of("tokens",
                new io.mstar.conductor.lifecycle.Submission.InputTensor("int32", List.of(1L), new byte[4])), 1, null,
                Map.of(), null, null))).block(Duration.ofSeconds(5));
        web.get().uri("/admin/requests?state=running").header("Authorization", "Bearer " + TOKEN).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.requests[?(@.request_id == 'adm-1')].state")
                .isEqualTo("running");
        web.get().uri("/admin/workers").header("Authorization", "Bearer " + TOKEN).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.workers.worker-1.requests").value(n -> assertThat((Integer) n).isPositive());
        web.post().uri("/admin/requests/adm-1/abort").header("Authorization", "Bearer " + TOKEN).exchange()
                .expectStatus().isAccepted();
        web.get().uri("/admin/requests?state=draining").header("Authorization", "Bearer " + TOKEN).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.requests[?(@.request_id == 'adm-1')].abort_reason")
                .isEqualTo("admin");
        web.post().uri("/admin/requests/nope/abort").header("Authorization", "Bearer " + TOKEN).exchange()
                .expectStatus().isNotFound();
        web.get().uri("/admin/requests?state=bogus").header("Authorization", "Bearer " + TOKEN).exchange()
                .expectStatus().isBadRequest();
        web.post().uri("/admin/requests/abort-all").header("Authorization", "Bearer " + TOKEN).exchange()
                .expectStatus().isAccepted().expectBody().jsonPath("$.aborted").isNumber();
        assertThat(loop.askRequests(RequestLifecycle::liveInputTensors).block()).isNotNegative();
    }

    @Test
    void aClientThatDisconnectsFromItsStreamAbortsTheRequest() {
        reactor.core.Disposable subscription = org.springframework.web.reactive.function.client.WebClient
                .create("http://localhost:" + port).post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"request_id\":\"d-1\",\"stream\":true,\"inputs\":{\"tokens\":{\"tokens\":[1]}}}")
                .retrieve().bodyToFlux(String.class).subscribe();
        await().atMost(Duration.ofSeconds(5)).until(() -> loop.askRequests(r -> r.view("d-1")).blockOptional()
                .map(v -> v.state() == io.mstar.conductor.lifecycle.RequestState.RUNNING).orElse(false));

        subscription.dispose();

        await().atMost(Duration.ofSeconds(10)).until(() -> "client_disconnect".equals(
                loop.askRequests(r -> r.view("d-1").abortReason()).block()));
        // the response cancelled; whether the end also passed depends on the abort racing the cancel (ClientStream)
        assertThat(loop.askRequests(r -> r.view("d-1").clientStream()).block().cancelled())
                .as("the response cancelled").isTrue();
    }

    private WebTestClient.ResponseSpec post(String json) {
        return web.post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON).bodyValue(json).exchange();
    }
}
