package io.mstar.conductor.openai;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;

import com.fasterxml.jackson.annotation.JsonProperty;

import io.mstar.conductor.api.ApiHeaders;
import io.mstar.conductor.api.ApiProperties;
import io.mstar.conductor.api.SubmitRequest;
import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.lifecycle.AbortReason;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestLifecycle;
import io.mstar.conductor.model.ConductorPolicies;
import io.mstar.conductor.output.Chunk;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * OpenAI-compatible routes (docs/openai-api.md): each call becomes one or more internal submissions through the
 * same path as {@code POST /v1/requests}, and their chunk streams are mapped to OpenAI's shapes. Errors use OpenAI's
 * {@code {"error":{...}}} body with the conductor's statuses. A client that goes away aborts its internal requests
 * ({@code client_disconnect}).
 */
@RestController
class OpenAiController {

    private static final Logger log = LoggerFactory.getLogger(OpenAiController.class);
    static final MediaType WAV = MediaType.parseMediaType("audio/wav");
    static final MediaType PCM = MediaType.parseMediaType("audio/pcm");

    private final Validation validation;
    private final InternalRequests internal;
    private final OpenAiProperties properties;
    private final JsonMapper json;
    /** {@code created} of every listed model: when this conductor started serving it. */
    private final long startedAt = Instant.now().getEpochSecond();

    OpenAiController(LifecycleLoop loop, ConductorPolicies policies, ApiProperties api, OpenAiProperties properties,
            JsonMapper json) {
        this.validation = new Validation(properties, api);
        this.internal = new InternalRequests(loop, policies, api);
        this.properties = properties;
        this.json = json;
    }

    // ---- models ----

    /** Both listings in one body: OpenAI's {@code object}/{@code data} and the conductor's own {@code models}. */
    record ModelList(@JsonProperty("object") String object, @JsonProperty("data") List<ModelCard> data,
            @JsonProperty("models") List<ModelName> models) {
    }

    record ModelCard(@JsonProperty("id") String id, @JsonProperty("object") String object,
            @JsonProperty("created") long created, @JsonProperty("owned_by") String ownedBy) {
    }

    record ModelName(@JsonProperty("name") String name) {
    }

    @GetMapping("/v1/models")
    Mono<ModelList> models() {
        return internal.models().map(names -> new ModelList("list",
                names.stream().map(n -> new ModelCard(n, "model", startedAt, "mstar")).toList(),
                names.stream().map(ModelName::new).toList()));
    }

    // ---- embeddings ----

    @PostMapping(path = "/v1/embeddings")
    Mono<Embeddings.EmbeddingList> embeddings(@RequestBody EmbeddingsRequest body) {
        Validation.EmbeddingInputs plan = validation.embeddings(body);
        List<SubmitRequest> requests = new ArrayList<>(plan.inputs().size());
        for (String text : plan.inputs()) {
            requests.add(new SubmitRequest(plan.model(), internal.textInput(plan.model(), text),
                    List.of(Embeddings.EMBEDDING_MODALITY), 1, null, "embd-" + UUID.randomUUID(), null, null, null,
                    false));
        }
        return internal.submitAll(requests, "input").flatMap(admissions -> {
            // Why the calls still running are aborted: the client left, unless an item failed first.
            AtomicReference<AbortReason> reason = new AtomicReference<>(AbortReason.CLIENT_DISCONNECT);
            List<Mono<Embeddings.Item>> items = new ArrayList<>(admissions.size());
            for (int i = 0; i < admissions.size(); i++) {
                RequestLifecycle.Admission a = admissions.get(i);
                items.add(Embeddings.item(i, a.chunks())
                        .doOnError(e -> reason.set(AbortReason.CLIENT_CANCEL))
                        .doOnCancel(() -> internal.abort(a.requestId(), reason.get())));
            }
            return Flux.merge(items).collectList()
                    .map(done -> Embeddings.list(plan.model(), done, plan.encodingFormat()));
        });
    }

    // ---- chat ----
    // Chat and speech answer a Flux<byte[]> whichever the form: the declared element type makes Spring write the
    // bytes as they are (an undeclared one sends text/event-stream through its own SSE writer, as JSON).

    @PostMapping(path = "/v1/chat/completions")
    Mono<ResponseEntity<Flux<byte[]>>> chat(@RequestBody ChatRequest body) {
        Validation.Chat plan = validation.chat(body);
        String id = "chatcmpl-" + UUID.randomUUID();
        SubmitRequest request = new SubmitRequest(plan.model(), internal.textInput(plan.model(), plan.prompt()),
                List.of(ChatCompletions.TEXT_MODALITY), plan.maxTokens(), plan.sampling(), id, null, plan.seed(), null,
                plan.stream());
        ChatCompletions.Plan mapping = new ChatCompletions.Plan(id, plan.model(), Instant.now().getEpochSecond(),
                plan.maxTokens(), plan.prompt().getBytes(StandardCharsets.UTF_8).length,
                plan.includeUsage());
        return internal.submit(request).flatMap(admission -> {
            Flux<Chunk> chunks = watched(admission);
            if (plan.stream()) {
                return Mono.just(ResponseEntity.ok().header(ApiHeaders.REQUEST_ID, id)
                        .contentType(MediaType.TEXT_EVENT_STREAM).header("Cache-Control", "no-cache")
                        .body(ChatCompletions.stream(mapping, chunks, json::writeValueAsString)));
            }
            return ChatCompletions.collect(mapping, chunks).map(completion -> ResponseEntity.ok()
                    .header(ApiHeaders.REQUEST_ID, id).contentType(MediaType.APPLICATION_JSON)
                    .body(Flux.just(json.writeValueAsBytes(completion))));
        });
    }

    // ---- speech ----

    @PostMapping(path = "/v1/audio/speech")
    Mono<ResponseEntity<Flux<byte[]>>> speech(@RequestBody SpeechRequest body) {
        Validation.SpeechInput plan = validation.speech(body);
        String id = "speech-" + UUID.randomUUID();
        SubmitRequest request = new SubmitRequest(plan.model(), internal.textInput(plan.model(), plan.input()),
                List.of(Speech.AUDIO_MODALITY), properties.speechMaxTokens(), null, id, null, plan.seed(), null,
                plan.stream());
        MediaType type = Speech.WAV.equals(plan.format()) ? WAV : PCM;
        return internal.submit(request).flatMap(admission -> {
            Flux<Chunk> chunks = watched(admission);
            if (plan.stream()) {
                return Mono.just(ResponseEntity.ok().header(ApiHeaders.REQUEST_ID, id).contentType(type)
                        .body(Speech.stream(plan.format(), chunks)));
            }
            return Speech.collect(plan.format(), chunks).map(file -> ResponseEntity.ok()
                    .header(ApiHeaders.REQUEST_ID, id)
                    .contentType(type).contentLength(file.length).body(Flux.just(file)));
        });
    }

    /** The request's chunks; cancelling them (the client left) aborts it. */
    private Flux<Chunk> watched(RequestLifecycle.Admission admission) {
        return admission.chunks().doOnCancel(() -> internal.abort(admission.requestId(), AbortReason.CLIENT_DISCONNECT));
    }

    // ---- errors, in OpenAI's shape (these routes only; /v1/requests keeps problem+json) ----

    @ExceptionHandler(ConductorException.class)
    ResponseEntity<OpenAiError> conductor(ConductorException e) {
        return OpenAiError.response(e);
    }

    @ExceptionHandler(ServerWebInputException.class)
    ResponseEntity<OpenAiError> input(ServerWebInputException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof DataBufferLimitException) {
                return tooLarge((DataBufferLimitException) t);
            }
        }
        return OpenAiError.response(new ConductorException(ErrorType.MALFORMED_REQUEST,
                "could not parse the JSON body: " + (e.getReason() == null ? "malformed request" : e.getReason())));
    }

    @ExceptionHandler(DataBufferLimitException.class)
    ResponseEntity<OpenAiError> tooLarge(DataBufferLimitException e) {
        return OpenAiError.response(new ConductorException(ErrorType.PAYLOAD_TOO_LARGE, "request body too large: "
                + e.getMessage()));
    }

    @ExceptionHandler(UnsupportedMediaTypeStatusException.class)
    ResponseEntity<OpenAiError> mediaType(UnsupportedMediaTypeStatusException e) {
        return OpenAiError.response(new ConductorException(ErrorType.MALFORMED_REQUEST,
                "the body must be application/json"));
    }

    @ExceptionHandler(IllegalStateException.class)
    ResponseEntity<OpenAiError> internal(IllegalStateException e) {
        log.error("internal error answering an OpenAI-route request", e);
        return OpenAiError.response(new ConductorException(ErrorType.INTERNAL, "internal error"));
    }
}
