package io.mstar.conductor.api;

import static io.mstar.conductor.api.PlayedWorkers.W0;
import static io.mstar.conductor.api.PlayedWorkers.W1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestLifecycle;
import io.mstar.conductor.lifecycle.RequestState;
import io.mstar.conductor.lifecycle.RequestView;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.model.ModelGraphs;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.WorkerGraphsDone;

/**
 * A counter request over real HTTP (NDJSON and SSE), with this test playing the workers' messages in-process and
 * serving their outputs from a real tensor server that the conductor reads: the client sees the model's exact
 * outputs as JSON integer arrays, and the conductor's input tensors are freed once the request is removed.
 */
// The same properties as PublicApiTests, so both share one cached context and broker.
@ConductorOverHttp(properties = {"mstar.conductor.api.max-body-size=4KB", "mstar.conductor.api.max-input-bytes=64B",
        "mstar.conductor.admin.token=0123456789abcdef-test-token"})
@ExtendWith(OutputCaptureExtension.class)
class CounterOverHttpTests {

    /** The counter's worker graphs, numbered as the services number them (every model of the deployment split). */
    private static final List<WorkerGraph> WGS = WorkerGraphSplit.split(DeploymentConfig.loadDefault(),
            ModelGraphs.of(DeploymentConfig.loadDefault().models().stream().map(m -> m.name()).toList())).stream()
            .filter(g -> g.model().equals("counter")).toList();

    @Autowired
    WebTestClient web;
    @Autowired
    LifecycleLoop loop;

    private PlayedWorkers workers;

    @BeforeEach
    void setUp() {
        workers = PlayedWorkers.servingTensors(loop, 3);
        workers.setUp();
    }

    @AfterEach
    void tearDown() {
        workers.close();
    }

    @Test
    void ndjsonStreamCarriesEveryCounterOutputAsIntegerArraysAndEndsWithDone(CapturedOutput output) {
        playWorkers("h-1", 3, 2);
        List<Map<String, Object>> chunks = web.post().uri("/v1/requests").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"request_id\":\"h-1\",\"stream\":true,\"max_tokens\":3,"
                        + "\"inputs\":{\"tokens\":{\"tokens\":[2]}}}")
                .exchange().expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_NDJSON)
                .expectHeader().valueEquals("Mstar-Request-Id", "h-1")
                .returnResult(new ParameterizedTypeReference<Map<String, Object>>() { }).getResponseBody()
                .collectList().block(Duration.ofSeconds(20));

        // s0 = 2*2 + 1 = 5; tokens 6, 7, 8; detok 60,70 then 80
        assertThat(chunks).extracting(c -> c.get("type")).last().isEqualTo("done");
        assertThat(chunks).filteredOn(c -> "token".equals(c.get("name"))).extracting(c -> c.get("data"))
                .containsExactly(List.of(6), List.of(7), List.of(8));
        assertThat(chunks).filteredOn(c -> "prefill_out".equals(c.get("name"))).extracting(c -> c.get("data"))
                .containsExactly(List.of(5));
        assertThat(chunks).filteredOn(c -> "text".equals(c.get("name"))).extracting(c -> c.get("data"))
                .containsExactly(List.of(60, 70), List.of(80));
        assertThat(chunks).filteredOn(c -> "token".equals(c.get("name"))).first()
                .satisfies(c -> {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> metadata = (Map<String, Object>) c.get("metadata");
                    assertThat(metadata).containsEntry("dtype", "int32").containsEntry("encoding", "json");
                });
        finishAndAssertReleased("h-1");
        // the access log's line, written once the response's last byte went out
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(output.getOut())
                .containsPattern("POST /v1/requests 200 bytes=[1-9][0-9]* duration_ms=[0-9]+ request_id=h-1 remote="));
    }

    @Test
    void sseAndModalityFilteringWork() {
        playWorkers("h-2", 1, 1);
        List<ServerSentEvent<Map<String, Object>>> events = web.post().uri("/v1/requests")
                .contentType(MediaType.APPLICATION_JSON).accept(MediaType.TEXT_EVENT_STREAM)
                .bodyValue("{\"model\":\"counter\",\"request_id\":\"h-2\",\"stream\":true,\"max_tokens\":1,"
                        + "\"outputs\":[\"audio\"],\"inputs\":{\"tokens\":{\"tokens\":[2]}}}")
                .exchange().expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .returnResult(new ParameterizedTypeReference<ServerSentEvent<Map<String, Object>>>() { })
                .getResponseBody().collectList().block(Duration.ofSeconds(20));

        // only the terminal event survives an "audio" filter on a text-only model
        assertThat(events).singleElement().satisfies(e -> {
            assertThat(e.event()).isEqualTo("done");
            assertThat(e.data()).containsEntry("type", "done");
        });
        finishAndAssertReleased("h-2");
    }

    @Test
    void anOutputWhoseReadIsHeldShowsInTheViewAndHoldsTheLaterOnes() throws Exception {
        workers.holdReads();
        playWorkers("h-3", 3, 1);
        CompletableFuture<List<Map<String, Object>>> answer = CompletableFuture.supplyAsync(() -> web.mutate()
                .responseTimeout(Duration.ofSeconds(30)).build().post().uri("/v1/requests")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"counter\",\"request_id\":\"h-3\",\"stream\":true,\"max_tokens\":3,"
                        + "\"inputs\":{\"tokens\":{\"tokens\":[2]}}}")
                .exchange().expectStatus().isOk()
                .returnResult(new ParameterizedTypeReference<Map<String, Object>>() { }).getResponseBody()
                .collectList().block(Duration.ofSeconds(30)));
        // every output was received and none could be read: each waits, in its loop order
        await().atMost(Duration.ofSeconds(10)).until(() -> loop.askRequests(r -> r.view("h-3")).blockOptional()
                .map(v -> v.outputsWaiting().equals(Map.of("prefill_out", 1, "token", 3, "text", 2))).orElse(false));
        RequestView held = loop.askRequests(r -> r.view("h-3")).block();
        assertThat(held.readsInFlight()).isPositive();
        assertThat(held.chunksDelivered()).isZero();
        assertThat(held.clientStream())
                .satisfies(c -> assertThat(c.subscribed()).isTrue())
                .satisfies(c -> assertThat(c.requested()).isNotZero())
                .satisfies(c -> assertThat(c.taken()).isZero());

        workers.releaseReads();
        List<Map<String, Object>> chunks = answer.get(30, TimeUnit.SECONDS);
        assertThat(chunks).filteredOn(c -> "token".equals(c.get("name"))).extracting(c -> c.get("data"))
                .containsExactly(List.of(6), List.of(7), List.of(8));
        assertThat(chunks).extracting(c -> c.get("type")).last().isEqualTo("done");
        finishAndAssertReleased("h-3");
    }

    /** Plays both workers on another thread once the request runs: prefill, decode passes, detok. */
    private void playWorkers(String id, int maxTokens, int decodePasses) {
        int prefill0 = wg("prefill", "embed");
        int prefill1 = wg("prefill", "count");
        int decode = wg("decode", "step");
        int chunk = wg("chunk", "detok");
        Thread t = new Thread(() -> {
            await().atMost(Duration.ofSeconds(10)).until(() -> loop.askRequests(r -> r.view(id)).blockOptional()
                    .map(v -> v.state() == RequestState.RUNNING).orElse(false));
            workers.deliver(W1, result(id, "worker-1", "prefill_out", 0, 0, 5));
            workers.deliver(W0, new WorkerGraphsDone(id, List.of(prefill0), true));
            workers.deliver(W1, WorkerGraphsDone.builder(id, List.of(prefill1), true)
                    .persistSignals(Map.of("state", List.of(tensor("worker-1", 5)))).build());
            int value = 6;
            int left = maxTokens;
            for (int pass = 1; pass <= decodePasses; pass++) {
                int n = Math.min(4, left);
                for (int i = 0; i < n; i++) {
                    workers.deliver(W1, result(id, "worker-1", "token", pass, i, value++));
                }
                left -= n;
                workers.deliver(W1, WorkerGraphsDone.builder(id, List.of(decode), true)
                        .newTokenCounts(Map.of("token", n))
                        .persistSignals(Map.of("state", List.of(tensor("worker-1", value - 1)))).build());
            }
            List<Integer> tokens = new java.util.ArrayList<>();
            for (int v = 6; v < value; v++) {
                tokens.add(v * 10);
            }
            for (int i = 0; i < tokens.size(); i += 2) {
                int[] chunkValues = tokens.subList(i, Math.min(i + 2, tokens.size())).stream().mapToInt(x -> x).toArray();
                workers.deliver(W0, result(id, "worker-0", "text", i / 2, 0, chunkValues));
                workers.deliver(W0, WorkerGraphsDone.builder(id, List.of(chunk), true).partitionName("detok")
                        .partitionDone(i + 2 >= tokens.size()).build());
            }
        }, "test-workers");
        t.setDaemon(true);
        t.start();
    }

    /**
     * The request ends; its view tells each partition's last walk and pass: prefill is pass 0, and both requests end in
     * their first decode pass (at most 4 tokens; a report of a pass never started changes nothing).
     */
    private void finishAndAssertReleased(String id) {
        workers.readsDone(id);
        await().atMost(Duration.ofSeconds(10)).until(() -> loop.askRequests(r -> r.view(id).state()).block()
                == RequestState.REMOVED);
        assertThat(loop.askRequests(RequestLifecycle::liveInputTensors).block()).isZero();
        byte[] view = web.get().uri("/v1/requests/" + id).exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.state").isEqualTo("removed").jsonPath("$.outcome").isEqualTo("completed")
                .jsonPath("$.partitions.default.walk").isEqualTo("decode")
                .jsonPath("$.partitions.default.pass").isEqualTo(1)
                .jsonPath("$.partitions.default.done").isEqualTo(true)
                .jsonPath("$.partitions.detok.walk").isEqualTo("chunk")
                .jsonPath("$.partitions.detok.done").isEqualTo(true)
                .jsonPath("$.reads_in_flight").isEqualTo(0)
                .jsonPath("$.outputs_waiting").isEmpty()
                // the response saw the end; below, it took every chunk handed out, the terminal one too
                .jsonPath("$.client_stream.subscribed").isEqualTo(true)
                .jsonPath("$.client_stream.completed").isEqualTo(true)
                .jsonPath("$.client_stream.cancelled").isEqualTo(false)
                .returnResult().getResponseBody();
        DocumentContext json = JsonPath.parse(new String(view, StandardCharsets.UTF_8));
        assertThat(json.read("$.client_stream.taken", Integer.class))
                .isEqualTo(json.read("$.chunks_delivered", Integer.class) + 1);
    }

    private ResultTensors result(String id, String producer, String signal, int fwd, int iteration, int... values) {
        return new ResultTensors(id, "text", GraphEdge.builder("emit_to_client", signal)
                .tensorInfo(List.of(tensor(producer, values))).outputModality("text").build(),
                new NestedLoopIndices(List.of("decode_loop"), Map.of("decode_loop", iteration), fwd), Map.of());
    }

    private TensorPointerInfo tensor(String producer, int... values) {
        ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : values) {
            b.putInt(v);
        }
        return workers.tensor(producer, "int32", b.array());
    }

    private static int wg(String walk, String node) {
        return PlayedWorkers.graphId(WGS, walk, node);
    }
}
