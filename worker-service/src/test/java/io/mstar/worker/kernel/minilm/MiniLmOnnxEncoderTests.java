package io.mstar.worker.kernel.minilm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.worker.kernel.onnx.OnnxModelException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * The host worker's encoder ({@link MiniLmOnnxEncoder}, the model's ONNX file on ONNX Runtime, then the shared
 * pooling) against the golden set: cosine 0.9999 per sentence in padded batches of mixed lengths, and a sentence's
 * embedding the same whatever batch it is padded in.
 */
class MiniLmOnnxEncoderTests {

    private static MiniLmGolden golden;
    private static MiniLmOnnxEncoder encoder;

    @BeforeAll
    static void load() throws Exception {
        golden = MiniLmGolden.load();
        encoder = MiniLmOnnxEncoder.fromSystemPropertyOrClasspath();
    }

    @AfterAll
    static void close() {
        encoder.close();
        encoder.close();
    }

    @Test
    void onnxEncoderMatchesTheGoldenSetOnPaddedBatches() {
        int n = golden.sentences().size();
        double worst = 1;
        int[][] batches = {{0, 1}, {2, 12}, {12, 30}, {30, 47}, {47, n - 1}, {n - 1, n}, {0, n}};
        for (int[] range : batches) {
            List<int[]> ids = new ArrayList<>(golden.ids().subList(range[0], range[1]));
            float[][] out = encoder.encode(ids);
            assertThat(out).hasNumberOfRows(ids.size());
            for (int i = range[0]; i < range[1]; i++) {
                float[] e = out[i - range[0]];
                assertThat(e).hasSize(MiniLmGolden.DIM);
                double cos = MiniLmGolden.cosine(e, golden.embeddings()[i]);
                worst = Math.min(worst, cos);
                assertThat(cos).as("sentence %d (%d word-pieces) in batch %d..%d", i, ids.get(i - range[0]).length,
                        range[0], range[1]).isGreaterThanOrEqualTo(MiniLmGolden.MIN_COSINE);
                assertThat(MiniLmGolden.cosine(e, e)).isCloseTo(1.0, within(1e-6));
            }
        }
        System.out.printf("minilm onnx vs golden: worst cosine %.8f (1 - cos = %.2e) over %d sentences%n", worst,
                1 - worst, n);
    }

    @Test
    void aSentencePaddedInABatchEmbedsAsItDoesAlone() {
        List<int[]> ids = golden.ids().subList(2, 12);
        float[][] together = encoder.encode(ids);
        for (int i = 0; i < ids.size(); i++) {
            float[] alone = encoder.encode(List.of(ids.get(i)))[0];
            for (int c = 0; c < alone.length; c++) {
                assertThat(together[i][c]).as("sentence %d, component %d", i, c).isCloseTo(alone[c], within(1e-5f));
            }
        }
        assertThat(encoder.encode(List.of())).isEmpty();
        assertThatThrownBy(() -> encoder.encode(List.of(new int[] {101, 40_000, 102})))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the vocabulary");
    }

    @Test
    void aFileThatIsNotTheModelFailsAtLoadNamingIt(@TempDir Path dir) throws Exception {
        Path garbage = Files.write(dir.resolve("not-minilm.onnx"), new byte[] {1, 2, 3});
        assertThatThrownBy(() -> new MiniLmOnnxEncoder(garbage.toString(), MiniLmConfig.ALL_MINILM_L6_V2, 1))
                .isInstanceOf(OnnxModelException.class).hasMessageContaining(garbage.toString());
    }
}
