package io.mstar.conductor.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import com.fasterxml.jackson.annotation.JsonProperty;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.lifecycle.AbortReason;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestView;
import io.mstar.conductor.lifecycle.Submission;
import io.mstar.conductor.output.Chunk;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The public API (docs/architecture.md#public-api): submit, stream or collect, status, cancel ({@code GET /v1/models}
 * is {@code io.mstar.conductor.openai}'s, which lists in both shapes). Handlers run on Netty threads and only validate,
 * decode and ask the lifecycle loop; they never touch request state.
 */
@RestController
class RequestController {

    static final MediaType NDJSON = MediaType.APPLICATION_NDJSON;

    private final LifecycleLoop loop;
    private final SubmissionMapping mapping;

    RequestController(LifecycleLoop loop, ApiProperties properties) {
        this.loop = loop;
        this.mapping = new SubmissionMapping(properties);
    }

    /** The non-streaming answer: every output chunk, in delivery order. */
    record Completed(@JsonProperty("request_id") String requestId, @JsonProperty("model") String model,
            @JsonProperty("status") String status, @JsonProperty("outputs") List<Chunk> outputs) {
    }

    @PostMapping(path = "/v1/requests", consumes = MediaType.APPLICATION_JSON_VALUE)
    Mono<ResponseEntity<?>> submit(@RequestBody SubmitRequest body,
            @RequestHeader(name = "Accept", required = false) String accept) {
        Submission submission = mapping.map(body);
        List<String> modalities = body.outputs() == null ? List.of() : body.outputs();
        boolean stream = Boolean.TRUE.equals(body.stream());
        boolean sse = accept != null && accept.contains(MediaType.TEXT_EVENT_STREAM_VALUE);
        return loop.askRequests(requests -> requests.submit(submission)).map(admission -> {
            String id = admission.requestId();
            Flux<Chunk> chunks = admission.chunks()
                    .filter(c -> c.terminal() || modalities.isEmpty() || modalities.contains(c.modality()))
                    .doOnCancel(() -> abortQuietly(id, AbortReason.CLIENT_DISCONNECT));
            if (stream && sse) {
                return ResponseEntity.ok().header(ApiHeaders.REQUEST_ID, id).contentType(MediaType.TEXT_EVENT_STREAM)
                        .body(chunks.map(c -> ServerSentEvent.builder(c).event(c.type()).build()));
            }
            if (stream) {
                return ResponseEntity.ok().header(ApiHeaders.REQUEST_ID, id).contentType(NDJSON).body(chunks);
            }
            return ResponseEntity.ok().header(ApiHeaders.REQUEST_ID, id).body(collect(id, submission.model(), chunks));
        });
    }

    private Mono<?> collect(String id, String model, Flux<Chunk> chunks) {
        return chunks.collectList().flatMap(all -> {
            Chunk terminal = all.isEmpty() ? null : all.get(all.size() - 1);
            if (terminal == null || !terminal.terminal()) {
                return Mono.error(new ConductorException(ErrorType.INTERNAL, "output stream ended without a terminal chunk"));
            }
            if (!Chunk.DONE.equals(terminal.type())) {
                return Mono.error(new ConductorException(ErrorType.valueOf(errorTypeName(terminal.error().errorType())),
                        terminal.error().detail()));
            }
            return Mono.just(new Completed(id, model, Chunk.DONE, all.subList(0, all.size() - 1)));
        });
    }

    private static String errorTypeName(String value) {
        for (ErrorType t : ErrorType.values()) {
            if (t.value().equals(value)) {
                return t.name();
            }
        }
        return ErrorType.INTERNAL.name();
    }

    @GetMapping("/v1/requests/{id}")
    Mono<RequestView> status(@PathVariable String id) {
        return loop.askRequests(requests -> requests.view(id))
                .switchIfEmpty(Mono.error(() -> notFound(id)));
    }

    @DeleteMapping("/v1/requests/{id}")
    Mono<ResponseEntity<Map<String, Object>>> cancel(@PathVariable String id) {
        return loop.askRequests(requests -> requests.abort(id, AbortReason.CLIENT_CANCEL)).flatMap(known -> known
                ? Mono.just(ResponseEntity.accepted().body(Map.<String, Object>of("request_id", id, "cancelled", true)))
                : Mono.error(notFound(id)));
    }

    private void abortQuietly(String id, AbortReason reason) {
        loop.askRequests(requests -> requests.abort(id, reason)).timeout(Duration.ofSeconds(5))
                .onErrorResume(e -> Mono.empty()).subscribe();
    }

    private static ConductorException notFound(String id) {
        return new ConductorException(ErrorType.REQUEST_NOT_FOUND, "no request '" + id + "'");
    }
}
