package io.mstar.worker.kernel.minilm;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.mstar.model.MiniLmModel;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * minilm-embed against ONNX Runtime on the fixed sentence set ({@code sentences.txt}, 53 sentences from 1 to 256+
 * word-pieces): the golden files equal a fresh ONNX Runtime run, the tokenizer's ids equal an independent WordPiece
 * and a few hand-checked ids, and the Java encoder on the padded batches matches ONNX Runtime to cosine 0.9999.
 */
class MiniLmReferenceTests {

    private static MiniLmGolden golden;
    private static MiniLmTokenizer tokenizer;
    private static MiniLmWeights weights;

    @BeforeAll
    static void load() throws Exception {
        golden = MiniLmGolden.load();
        tokenizer = MiniLmTokenizer.fromClasspath();
        weights = MiniLmWeights.fromClasspath();
    }

    @AfterAll
    static void close() {
        tokenizer.close();
    }

    @Test
    void goldenFilesEqualAFreshTokenizerAndOnnxRuntimeRun() throws Exception {
        assertThat(golden.sentences()).hasSizeGreaterThanOrEqualTo(50);
        assertThat(golden.ids()).hasSameSizeAs(golden.sentences());
        assertThat(golden.embeddings().length).isEqualTo(golden.sentences().size());
        try (OrtReference ort = new OrtReference()) {
            for (int i = 0; i < golden.sentences().size(); i++) {
                int[] ids = tokenizer.encode(golden.sentences().get(i));
                assertThat(ids).as("ids of sentence %d", i).isEqualTo(golden.ids().get(i));
                float[] fresh = ort.embed(ids);
                for (int c = 0; c < fresh.length; c++) {
                    assertThat(golden.embeddings()[i][c]).as("sentence %d, component %d", i, c)
                            .isCloseTo(fresh[c], org.assertj.core.data.Offset.offset(1e-5f));
                }
            }
        }
    }

    @Test
    void tokenizerIdsEqualAnIndependentWordPieceAndHandCheckedIds() throws Exception {
        ReferenceWordPiece reference = ReferenceWordPiece.fromClasspath();
        for (int i = 0; i < golden.sentences().size(); i++) {
            String sentence = golden.sentences().get(i);
            assertThat(tokenizer.encode(sentence)).as("sentence %d: %s", i, sentence)
                    .isEqualTo(reference.encode(sentence, MiniLmModel.MAX_WORD_PIECES));
        }
        // ids looked up by hand in the vocabulary of tokenizer.json (outside DJL)
        assertThat(reference.id("[CLS]")).isEqualTo(101);
        assertThat(reference.id("[SEP]")).isEqualTo(102);
        assertThat(tokenizer.encode("a cat sits on the mat"))
                .containsExactly(101, 1037, 4937, 7719, 2006, 1996, 13523, 102);
        assertThat(tokenizer.tokens("Unbelievably, tokenization"))
                .containsExactly("[CLS]", "un", "##bel", "##ie", "##va", "##bly", ",", "token", "##ization", "[SEP]");
        assertThat(tokenizer.encode("Unbelievably, tokenization"))
                .containsExactly(101, 4895, 8671, 2666, 3567, 6321, 1010, 19204, 3989, 102);
        int[] longest = golden.ids().get(golden.ids().size() - 1);
        assertThat(longest).hasSize(MiniLmModel.MAX_WORD_PIECES);
        assertThat(longest[0]).isEqualTo(101);
        assertThat(longest[longest.length - 1]).isEqualTo(102);
        assertThat(tokenizer.encode("")).containsExactly(101, 102);
    }

    @Test
    void javaEncoderMatchesOnnxRuntimeOnPaddedBatches() {
        MiniLmHostEncoder encoder = new MiniLmHostEncoder(weights);
        int n = golden.sentences().size();
        double worst = 1;
        // batches of mixed lengths exercise padding and the mask; the 256-piece sentence runs alone
        int[][] batches = {{0, 1}, {2, 12}, {12, 30}, {30, 47}, {47, n - 1}, {n - 1, n}};
        for (int[] range : batches) {
            List<int[]> ids = new ArrayList<>(golden.ids().subList(range[0], range[1]));
            float[][] out = encoder.encode(ids);
            for (int i = range[0]; i < range[1]; i++) {
                float[] e = out[i - range[0]];
                double cos = MiniLmGolden.cosine(e, golden.embeddings()[i]);
                worst = Math.min(worst, cos);
                assertThat(cos).as("sentence %d (%d word-pieces)", i, ids.get(i - range[0]).length)
                        .isGreaterThanOrEqualTo(MiniLmGolden.MIN_COSINE);
                assertThat(MiniLmGolden.cosine(e, e)).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-6));
            }
        }
        System.out.printf("minilm host vs ONNX Runtime: worst cosine %.8f (1 - cos = %.2e) over %d sentences%n", worst,
                1 - worst, n);
    }

    @Test
    void aCatOnAMatIsCloserToAKittenOnARugThanToFallingMarkets() {
        MiniLmHostEncoder encoder = new MiniLmHostEncoder(weights);
        float[][] e = encoder.encode(List.of(tokenizer.encode("a cat sits on the mat"),
                tokenizer.encode("a kitten is on a rug"), tokenizer.encode("stock markets fell")));
        double kitten = MiniLmGolden.cosine(e[0], e[1]);
        double markets = MiniLmGolden.cosine(e[0], e[2]);
        System.out.printf("cat~kitten %.4f, cat~markets %.4f%n", kitten, markets);
        assertThat(kitten).isGreaterThan(markets + 0.3);
    }
}
