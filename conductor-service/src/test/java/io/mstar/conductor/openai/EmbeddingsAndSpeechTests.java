package io.mstar.conductor.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;
import reactor.core.publisher.Flux;

/** Embedding items to OpenAI's list, and audio chunks to WAV/PCM, whole and streamed. */
class EmbeddingsAndSpeechTests {

    @Test
    void itemsBecomeTheListInInputOrderWithSummedTokensInEitherEncoding() {
        Embeddings.Item a = Embeddings.item(0, Flux.just(Chunks.embedding(0.5f, -1f), Chunks.numTokens(4), Chunk.done()))
                .block(Duration.ofSeconds(5));
        Embeddings.Item b = Embeddings.item(1, Flux.just(Chunks.numTokens(7), Chunks.embedding(0.25f, 2f), Chunk.done()))
                .block(Duration.ofSeconds(5));
        Embeddings.EmbeddingList list = Embeddings.list("minilm-embed", List.of(b, a), Embeddings.FLOAT);
        assertThat(list.object()).isEqualTo("list");
        assertThat(list.model()).isEqualTo("minilm-embed");
        assertThat(list.usage()).isEqualTo(new Embeddings.Usage(11, 11));
        assertThat(list.data()).extracting(Embeddings.Embedding::index).containsExactly(0, 1);
        assertThat(list.data()).extracting(Embeddings.Embedding::object).containsOnly("embedding");
        assertThat((float[]) list.data().get(1).embedding()).containsExactly(0.25f, 2f);

        String base64 = (String) Embeddings.list("m", List.of(a), Embeddings.BASE64).data().get(0).embedding();
        ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(base64)).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(bytes.remaining()).isEqualTo(8);
        assertThat(bytes.getFloat()).isEqualTo(0.5f);
        assertThat(bytes.getFloat()).isEqualTo(-1f);
    }

    @Test
    void anItemWithoutEmbeddingOrThatFailedIsItsErrorNamingTheInput() {
        assertThatThrownBy(() -> Embeddings.item(3, Flux.just(Chunks.numTokens(2), Chunk.done())).block())
                .isInstanceOfSatisfying(OpenAiException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.MODEL_ERROR);
                    assertThat(e.getMessage()).startsWith("input[3]");
                });
        assertThatThrownBy(() -> Embeddings.item(2, Flux.just(Chunks.failed("invalid_input", 400, "too long"))).block())
                .isInstanceOfSatisfying(OpenAiException.class, e -> {
                    assertThat(e.type()).isEqualTo(ErrorType.INVALID_INPUT);
                    assertThat(e.param()).isEqualTo("input");
                    assertThat(e.getMessage()).isEqualTo("input[2]: too long");
                });
        assertThatThrownBy(() -> Embeddings.item(0, Flux.just(Chunks.embedding(1f), Chunks.embedding(1f), Chunk.done()))
                .block()).isInstanceOfSatisfying(OpenAiException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.MODEL_ERROR));
    }

    @Test
    void aWholeWavHasTheChunksFormatExactSizesAndTheConcatenatedSamples() {
        byte[] file = Speech.collect("wav", Flux.just(Chunks.text('a'), Chunks.audio(22050, 1, (short) 1, (short) -2),
                Chunks.audio(22050, 1, (short) 300), Chunk.done())).block(Duration.ofSeconds(5));
        assertThat(file).hasSize(44 + 6);
        assertThat(WavTests.Parsed.of(Arrays.copyOf(file, 44))).isEqualTo(new WavTests.Parsed("RIFF", 42, "WAVE", "fmt ",
                16, 1, 1, 22050, 44100, 2, 16, "data", 6));
        ByteBuffer samples = ByteBuffer.wrap(file, 44, 6).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(new short[] {samples.getShort(), samples.getShort(), samples.getShort()})
                .containsExactly((short) 1, (short) -2, (short) 300);

        byte[] pcm = Speech.collect("pcm", Flux.just(Chunks.audio(16000, 1, (short) 7), Chunk.done())).block();
        assertThat(pcm).containsExactly(7, 0);

        byte[] empty = Speech.collect("wav", Flux.just(Chunk.done())).block();
        assertThat(WavTests.Parsed.of(empty)).isEqualTo(new WavTests.Parsed("RIFF", 36, "WAVE", "fmt ", 16, 1, 1,
                16000, 32000, 2, 16, "data", 0));
    }

    @Test
    void audioOfChangingFormatOrWrongDtypeIsAModelErrorAndAFailedRequestItsError() {
        assertThatThrownBy(() -> Speech.collect("wav", Flux.just(Chunks.audio(16000, 1, (short) 1),
                Chunks.audio(8000, 1, (short) 1), Chunk.done())).block())
                .isInstanceOfSatisfying(OpenAiException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.MODEL_ERROR));
        Chunk floatAudio = Chunk.output("audio", "audio", List.of(0.5f), java.util.Map.of("dtype", "float32"));
        assertThatThrownBy(() -> Speech.collect("wav", Flux.just(floatAudio, Chunk.done())).block())
                .isInstanceOfSatisfying(OpenAiException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.MODEL_ERROR));
        assertThatThrownBy(() -> Speech.collect("wav", Flux.just(Chunks.aborted("deadline"))).block())
                .isInstanceOfSatisfying(OpenAiException.class,
                        e -> assertThat(e.type()).isEqualTo(ErrorType.REQUEST_ABORTED));
    }

    @Test
    void aStreamedWavIsAMaximalSizeHeaderThenEachChunksSamplesAsTheyCome() {
        List<byte[]> parts = Speech.stream("wav", Flux.just(Chunks.text('a'), Chunks.audio(16000, 1, (short) 1),
                Chunks.audio(16000, 1, (short) 2, (short) 3), Chunk.done())).collectList().block(Duration.ofSeconds(5));
        assertThat(parts).hasSize(3);
        assertThat(WavTests.Parsed.of(parts.get(0))).isEqualTo(new WavTests.Parsed("RIFF", 0xFFFFFFFFL, "WAVE", "fmt ",
                16, 1, 1, 16000, 32000, 2, 16, "data", 0xFFFFFFFFL));
        assertThat(parts.get(1)).containsExactly(1, 0);
        assertThat(parts.get(2)).containsExactly(2, 0, 3, 0);

        assertThat(Speech.stream("pcm", Flux.just(Chunks.audio(16000, 1, (short) 1), Chunk.done())).collectList().block())
                .singleElement().satisfies(p -> assertThat(p).containsExactly(1, 0));
        assertThat(Speech.stream("wav", Flux.just(Chunk.done())).collectList().block()).singleElement()
                .satisfies(p -> assertThat(p).hasSize(44));
        assertThatThrownBy(() -> Speech.stream("wav", Flux.just(Chunks.audio(16000, 1, (short) 1),
                Chunks.failed("worker_lost", 502, "gone"))).collectList().block())
                .isInstanceOfSatisfying(OpenAiException.class, e -> assertThat(e.type()).isEqualTo(ErrorType.WORKER_LOST));
    }
}
