package io.mstar.conductor.openai;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;

/**
 * Turns a chat request's internal chunk stream into OpenAI's {@code chat.completion} object or its
 * {@code chat.completion.chunk} SSE stream. Text chunks (modality {@code text}) carry one byte value per decode
 * step; their count is the completion's token count, and {@code finish_reason} is {@code length} when it reached
 * {@code max_tokens}, else {@code stop} (the model ended at its EOS). Other modalities are ignored.
 */
public final class ChatCompletions {

    static final String TEXT_MODALITY = "text";
    public static final String STOP = "stop";
    public static final String LENGTH = "length";

    /** What the mapping needs from a validated request. */
    public record Plan(String id, String model, long created, int maxTokens, int promptTokens, boolean includeUsage) {
    }

    public record Usage(@JsonProperty("prompt_tokens") int promptTokens,
            @JsonProperty("completion_tokens") int completionTokens, @JsonProperty("total_tokens") int totalTokens) {

        static Usage of(int prompt, int completion) {
            return new Usage(prompt, completion, prompt + completion);
        }
    }

    public record Message(@JsonProperty("role") String role, @JsonProperty("content") String content) {
    }

    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Choice(@JsonProperty("index") int index, @JsonProperty("message") Message message,
            @JsonProperty("logprobs") Object logprobs, @JsonProperty("finish_reason") String finishReason) {
    }

    public record Completion(@JsonProperty("id") String id, @JsonProperty("object") String object,
            @JsonProperty("created") long created, @JsonProperty("model") String model,
            @JsonProperty("choices") List<Choice> choices, @JsonProperty("usage") Usage usage) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Delta(@JsonProperty("role") String role, @JsonProperty("content") String content) {
    }

    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record ChunkChoice(@JsonProperty("index") int index, @JsonProperty("delta") Delta delta,
            @JsonProperty("logprobs") Object logprobs, @JsonProperty("finish_reason") String finishReason) {
    }

    /** {@code usage} is present only on the include_usage chunk (with no choices). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record CompletionChunk(@JsonProperty("id") String id, @JsonProperty("object") String object,
            @JsonProperty("created") long created, @JsonProperty("model") String model,
            @JsonProperty("choices") List<ChunkChoice> choices, @JsonProperty("usage") Usage usage) {
    }

    private ChatCompletions() {
    }

    static String finishReason(int completionTokens, int maxTokens) {
        return completionTokens >= maxTokens ? LENGTH : STOP;
    }

    /** The non-streaming answer; a failed or aborted request is an {@link OpenAiException} of its error. */
    public static Mono<Completion> collect(Plan plan, Flux<Chunk> chunks) {
        return Mono.defer(() -> {
            Utf8Stream utf8 = new Utf8Stream();
            StringBuilder text = new StringBuilder();
            int[] tokens = {0};
            return chunks.handle((Chunk c, SynchronousSink<Completion> sink) -> {
                if (!c.terminal()) {
                    if (TEXT_MODALITY.equals(c.modality())) {
                        byte[] bytes = ChunkData.textBytes(c);
                        tokens[0] += bytes.length;
                        text.append(utf8.feed(bytes));
                    }
                } else if (Chunk.DONE.equals(c.type())) {
                    text.append(utf8.finish());
                    sink.next(new Completion(plan.id(), "chat.completion", plan.created(), plan.model(),
                            List.of(new Choice(0, new Message("assistant", text.toString()), null,
                                    finishReason(tokens[0], plan.maxTokens()))),
                            Usage.of(plan.promptTokens(), tokens[0])));
                } else {
                    sink.error(ChunkData.terminalError(c, "", null));
                }
            }).singleOrEmpty().switchIfEmpty(Mono.error(() -> new OpenAiException(ErrorType.INTERNAL,
                    null, "output stream ended without a terminal chunk")));
        });
    }

    /**
     * The streaming answer as SSE frames: the first chunk carries {@code role}, then content deltas (never a split
     * character), a last chunk with {@code finish_reason}, the usage chunk when asked for, {@code [DONE]}. A request
     * that fails before any frame errors the flux (the HTTP answer is then an error status); one that fails later
     * gets an OpenAI error object as a last {@code data:} event and no {@code [DONE]}.
     */
    public static Flux<byte[]> stream(Plan plan, Flux<Chunk> chunks, Function<Object, String> json) {
        return Flux.defer(() -> {
            StreamState state = new StreamState(plan, json);
            return chunks.concatMapIterable(state::onChunk);
        });
    }

    /** The per-stream state; confined to the stream's one subscriber. */
    static final class StreamState {
        private final Plan plan;
        private final Function<Object, String> json;
        private final Utf8Stream utf8 = new Utf8Stream();
        private boolean started;
        private int tokens;

        StreamState(Plan plan, Function<Object, String> json) {
            this.plan = plan;
            this.json = json;
        }

        List<byte[]> onChunk(Chunk c) {
            List<byte[]> frames = new ArrayList<>();
            if (!c.terminal()) {
                if (TEXT_MODALITY.equals(c.modality())) {
                    byte[] bytes = ChunkData.textBytes(c);
                    tokens += bytes.length;
                    content(utf8.feed(bytes), frames);
                }
                return frames;
            }
            if (!Chunk.DONE.equals(c.type())) {
                OpenAiException error = ChunkData.terminalError(c, "", null);
                if (!started) {
                    throw error;
                }
                frames.add(Sse.event(json.apply(OpenAiError.of(error))));
                return frames;
            }
            content(utf8.finish(), frames);
            start(frames);
            frames.add(frame(new ChunkChoice(0, new Delta(null, null), null, finishReason(tokens, plan.maxTokens())), null));
            if (plan.includeUsage()) {
                frames.add(Sse.event(json.apply(new CompletionChunk(plan.id(), "chat.completion.chunk", plan.created(),
                        plan.model(), List.of(), Usage.of(plan.promptTokens(), tokens)))));
            }
            frames.add(Sse.done());
            return frames;
        }

        private void content(String text, List<byte[]> frames) {
            if (text.isEmpty()) {
                return;
            }
            start(frames);
            frames.add(frame(new ChunkChoice(0, new Delta(null, text), null, null), null));
        }

        /** OpenAI's first chunk: the role and empty content. */
        private void start(List<byte[]> frames) {
            if (!started) {
                started = true;
                frames.add(frame(new ChunkChoice(0, new Delta("assistant", ""), null, null), null));
            }
        }

        private byte[] frame(ChunkChoice choice, Usage usage) {
            return Sse.event(json.apply(new CompletionChunk(plan.id(), "chat.completion.chunk", plan.created(),
                    plan.model(), List.of(choice), usage)));
        }
    }
}
