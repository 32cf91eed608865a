package io.mstar.conductor.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;
import io.mstar.testing.Seeds;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A chat request's chunk stream to OpenAI's completion object and to its SSE frames. */
class ChatCompletionsTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final ChatCompletions.Plan PLAN = new ChatCompletions.Plan("chatcmpl-1", "toy-tts", 1700000000L, 8,
            20, false);

    private static Chunk[] textChunks(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        List<Chunk> chunks = new ArrayList<>();
        for (byte b : bytes) {
            chunks.add(Chunks.text(b & 0xff));
        }
        return chunks.toArray(Chunk[]::new);
    }

    @Test
    void aCompletionThatEndedBeforeMaxTokensStoppedAndCountsItsTokens() {
        ChatCompletions.Completion c = ChatCompletions.collect(PLAN,
                Flux.concat(Flux.just(textChunks("hé€")), Flux.just(Chunk.done()))).block(Duration.ofSeconds(5));
        assertThat(c.object()).isEqualTo("chat.completion");
        assertThat(c.id()).isEqualTo("chatcmpl-1");
        assertThat(c.choices()).singleElement().satisfies(choice -> {
            assertThat(choice.message()).isEqualTo(new ChatCompletions.Message("assistant", "hé€"));
            assertThat(choice.finishReason()).isEqualTo("stop");
        });
        assertThat(c.usage()).isEqualTo(new ChatCompletions.Usage(20, 6, 26));
        JsonNode tree = JSON.valueToTree(c);
        assertThat(tree.at("/choices/0/logprobs").isNull()).isTrue();
        assertThat(tree.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
    }

    @Test
    void aCompletionThatReachedMaxTokensEndedForLength() {
        ChatCompletions.Completion c = ChatCompletions.collect(PLAN,
                Flux.just(Chunks.text('a', 'b', 'c'), Chunks.text('d', 'e', 'f', 'g', 'h'), Chunk.done()))
                .block(Duration.ofSeconds(5));
        assertThat(c.choices().get(0).message().content()).isEqualTo("abcdefgh");
        assertThat(c.choices().get(0).finishReason()).isEqualTo("length");
    }

    @Test
    void nonTextOutputsAreIgnoredAndAFailedRequestIsItsError() {
        ChatCompletions.Completion c = ChatCompletions.collect(PLAN, Flux.just(Chunks.audio(16000, 1, (short) 1),
                Chunks.text('o'), Chunks.numTokens(3), Chunk.done())).block(Duration.ofSeconds(5));
        assertThat(c.choices().get(0).message().content()).isEqualTo("o");

        assertThatThrownBy(() -> ChatCompletions.collect(PLAN, Flux.just(Chunks.text('o'),
                Chunks.failed("worker_lost", 502, "worker-1 lost"))).block(Duration.ofSeconds(5)))
                .isInstanceOfSatisfying(OpenAiException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.WORKER_LOST);
                    assertThat(e.getMessage()).isEqualTo("worker-1 lost");
                });
        assertThatThrownBy(() -> ChatCompletions.collect(PLAN, Flux.just(Chunks.text(300), Chunk.done()))
                .block(Duration.ofSeconds(5))).isInstanceOfSatisfying(OpenAiException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.MODEL_ERROR));
        assertThatThrownBy(() -> ChatCompletions.collect(PLAN, Flux.just(Chunks.text('a'))).block(Duration.ofSeconds(5)))
                .isInstanceOfSatisfying(OpenAiException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.INTERNAL));
    }

    @Test
    void theSseStreamIsRoleThenContentDeltasThenFinishThenDoneInExactFraming() {
        List<String> frames = frames(PLAN, Flux.concat(Flux.just(textChunks("hi")), Flux.just(Chunk.done())));
        assertThat(frames).hasSize(5);
        for (String f : frames) {
            assertThat(f).startsWith("data: ").endsWith("\n\n");
            assertThat(f.substring(0, f.length() - 2)).doesNotContain("\n");
        }
        assertThat(frames.get(4)).isEqualTo("data: [DONE]\n\n");
        assertThat(frames.get(0)).isEqualTo("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
                + "\"created\":1700000000,\"model\":\"toy-tts\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                + "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
        assertThat(payload(frames.get(1)).at("/choices/0/delta/content").asString()).isEqualTo("h");
        assertThat(payload(frames.get(2)).at("/choices/0/delta/content").asString()).isEqualTo("i");
        JsonNode last = payload(frames.get(3));
        assertThat(last.at("/choices/0/delta").isEmpty()).isTrue();
        assertThat(last.at("/choices/0/finish_reason").asString()).isEqualTo("stop");
        assertThat(last.has("usage")).isFalse();
    }

    @Test
    void streamedDeltasNeverSplitACharacterAndJoinToTheText() {
        long seed = Seeds.of("ChatCompletionsTests");
        Random random = new Random(seed);
        String text = "Grüße, 世界! 😀 ok";
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        List<Chunk> chunks = new ArrayList<>();
        for (int at = 0; at < bytes.length; ) {
            int n = Math.min(bytes.length - at, 1 + random.nextInt(3));
            int[] piece = new int[n];
            for (int i = 0; i < n; i++) {
                piece[i] = bytes[at + i] & 0xff;
            }
            chunks.add(Chunks.text(piece));
            at += n;
        }
        chunks.add(Chunk.done());
        ChatCompletions.Plan plan = new ChatCompletions.Plan("c", "toy-tts", 1, bytes.length, 3, true);
        List<String> frames = frames(plan, Flux.fromIterable(chunks));
        StringBuilder joined = new StringBuilder();
        for (String f : frames.subList(1, frames.size() - 3)) {
            String delta = payload(f).at("/choices/0/delta/content").asString();
            assertThat(delta).as("seed %d", seed).doesNotContain("\uFFFD").isNotEmpty();
            joined.append(delta);
        }
        assertThat(joined.toString()).as("seed %d", seed).isEqualTo(text);
        assertThat(payload(frames.get(frames.size() - 3)).at("/choices/0/finish_reason").asString()).isEqualTo("length");
        JsonNode usage = payload(frames.get(frames.size() - 2));
        assertThat(usage.at("/choices").isEmpty()).isTrue();
        assertThat(usage.at("/usage/completion_tokens").asInt()).isEqualTo(bytes.length);
        assertThat(usage.at("/usage/prompt_tokens").asInt()).isEqualTo(3);
        assertThat(usage.at("/usage/total_tokens").asInt()).isEqualTo(bytes.length + 3);
        assertThat(frames.get(frames.size() - 1)).isEqualTo("data: [DONE]\n\n");
    }

    @Test
    void aCompletionWithNoTextStillSendsRoleAndFinish() {
        List<String> frames = frames(PLAN, Flux.just(Chunk.done()));
        assertThat(frames).hasSize(3);
        assertThat(payload(frames.get(0)).at("/choices/0/delta/role").asString()).isEqualTo("assistant");
        assertThat(payload(frames.get(1)).at("/choices/0/finish_reason").asString()).isEqualTo("stop");
        assertThat(frames.get(2)).isEqualTo("data: [DONE]\n\n");
    }

    @Test
    void aFailureBeforeAnyFrameErrorsTheStreamAndOneAfterIsAnErrorEventWithoutDone() {
        assertThatThrownBy(() -> frames(PLAN, Flux.just(Chunks.failed("worker_failed", 502, "boom"))))
                .isInstanceOfSatisfying(OpenAiException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.WORKER_FAILED));

        List<String> frames = frames(PLAN, Flux.just(Chunks.text('x'), Chunks.aborted("deadline")));
        assertThat(frames).hasSize(3);
        JsonNode error = payload(frames.get(2));
        assertThat(error.at("/error/code").asString()).isEqualTo("request_aborted");
        assertThat(error.at("/error/type").asString()).isEqualTo("invalid_request_error");
        assertThat(frames).noneMatch(f -> f.contains("[DONE]"));
    }

    @Test
    void sseFramingIsDataLinePlusBlankLine() {
        assertThat(new String(Sse.event("{\"a\":1}"), StandardCharsets.UTF_8)).isEqualTo("data: {\"a\":1}\n\n");
        assertThat(new String(Sse.done(), StandardCharsets.UTF_8)).isEqualTo("data: [DONE]\n\n");
        assertThatThrownBy(() -> Sse.event("{\n}")).isInstanceOf(IllegalArgumentException.class);
        // JSON escapes a newline in content, so every payload stays on one line
        assertThat(JSON.writeValueAsString(new ChatCompletions.Delta(null, "a\nb"))).doesNotContain("\n");
    }

    private static List<String> frames(ChatCompletions.Plan plan, Flux<Chunk> chunks) {
        return ChatCompletions.stream(plan, chunks, JSON::writeValueAsString)
                .map(b -> new String(b, StandardCharsets.UTF_8)).collectList().block(Duration.ofSeconds(5));
    }

    private static JsonNode payload(String frame) {
        return JSON.readTree(frame.substring("data: ".length(), frame.length() - 2));
    }
}
