package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.model.ToyTtsModel;
import io.mstar.request.SamplingConfig;
import io.mstar.worker.kernel.tts.ToyTtsKernels;

/**
 * {@link WorkerEngine#describe}: what {@code GET /actuator/engine} shows of a toy-tts request while it runs on one
 * worker, and that nothing is left once it ended.
 */
class EngineDescriptionTests {

    private static final SamplingConfig NO_EOS = new SamplingConfig(null, 0.8, 0, 1.0, true, 1.0, 0L);

    @TempDir
    Path dir;

    @Test
    void aRunningRequestShowsItsPassesNodesAndStreamAndAnEndedOneIsGone() throws Exception {
        try (TtsHarness h = new TtsHarness(dir, TtsHarness.COLOCATED, d -> ToyTtsKernels.host())) {
            h.start("described", "Hello".getBytes(StandardCharsets.UTF_8), 400, NO_EOS, 7L);
            // the codec's stream is a broker round trip behind the text: wait for its audio too
            h.pumpUntil(() -> h.runs.get("described").text.size() >= 40 && h.runs.get("described").audio.size() >= 2);

            EngineDescription running = h.w0.loop.describe().block(Duration.ofSeconds(10));
            assertThat(running.requests()).singleElement().satisfies(request -> {
                assertThat(request.requestId()).isEqualTo("described");
                assertThat(request.model()).isEqualTo(ToyTtsModel.NAME);
                assertThat(request.phase()).isEqualTo("active");
                assertThat(request.end()).isNull();
                assertThat(request.partitions()).extracting(EngineDescription.PartitionView::name)
                        .containsExactlyInAnyOrder(ToyTtsModel.LM_PARTITION, ToyTtsModel.CODEC_PARTITION);
            });
            EngineDescription.RequestView request = running.requests().get(0);
            EngineDescription.PartitionView lm = request.partitions().stream()
                    .filter(p -> p.name().equals(ToyTtsModel.LM_PARTITION)).findFirst().orElseThrow();
            // 40 tokens are past the prefill: a decode pass of at most 16 iterations
            assertThat(lm.walk()).isEqualTo(ToyTtsModel.DECODE);
            assertThat(lm.fwdIndex()).isPositive();
            assertThat(lm.nodes()).singleElement().satisfies(node -> {
                assertThat(node.name()).isEqualTo(ToyTtsModel.LM);
                assertThat(node.loop()).isEqualTo(ToyTtsModel.DECODE_LOOP);
                assertThat(node.iterations()).isBetween(1, ToyTtsModel.DECODE_MAX_ITERS);
                assertThat(node.iteration()).isBetween(0, node.iterations());
            });
            EngineDescription.PartitionView codec = request.partitions().stream()
                    .filter(p -> p.name().equals(ToyTtsModel.CODEC_PARTITION)).findFirst().orElseThrow();
            assertThat(codec.streams()).singleElement().satisfies(stream -> {
                // two audio chunks came out: 8 tokens, then 4 more, were cut and consumed
                assertThat(stream.chunksCut()).isGreaterThanOrEqualTo(2);
                assertThat(stream.consumed()).isBetween(12L, stream.registered());
                assertThat(stream.producerDone()).isFalse();
                assertThat(stream.finished()).isFalse();
            });
            assertThat(running.steps()).allSatisfy(step -> assertThat(step.requests()).containsOnly("described"));

            h.pumpUntil(() -> h.runs.get("described").removed);
            EngineDescription ended = h.w0.loop.describe().block(Duration.ofSeconds(10));
            assertThat(ended.requests()).isEmpty();
            assertThat(ended.ready()).isEmpty();
            assertThat(ended.pageWaits()).isZero();
        }
    }
}
