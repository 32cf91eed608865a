package io.mstar.worker.kernel.minilm;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import io.mstar.model.MiniLmModel;

/**
 * The model's own WordPiece tokenizer ({@code tokenizer.json} of all-minilm-l6-v2: BERT normalisation with lower
 * casing, [CLS] ... [SEP]), run by the HuggingFace tokenizers library through DJL (its jar carries the native
 * library, nothing is downloaded). Sentences are truncated at {@link MiniLmModel#MAX_WORD_PIECES} word-pieces,
 * [CLS] and [SEP] included, and never padded: the encoder pads a batch itself. Not thread-safe by contract (the
 * engine loop owns it), though the native tokenizer is.
 */
public final class MiniLmTokenizer implements AutoCloseable {

    private final HuggingFaceTokenizer tokenizer;

    private MiniLmTokenizer(HuggingFaceTokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    /** The tokenizer shipped next to the weights in the langchain4j artifact. */
    public static MiniLmTokenizer fromClasspath() {
        try (InputStream in = MiniLmTokenizer.class.getClassLoader()
                .getResourceAsStream(MiniLmWeights.TOKENIZER_RESOURCE)) {
            if (in == null) {
                throw new MiniLmException("no " + MiniLmWeights.TOKENIZER_RESOURCE + " on the class path");
            }
            return new MiniLmTokenizer(HuggingFaceTokenizer.newInstance(in, Map.of(
                    "maxLength", Integer.toString(MiniLmModel.MAX_WORD_PIECES),
                    "truncation", "true",
                    "padding", "false")));
        } catch (IOException | RuntimeException | UnsatisfiedLinkError e) {
            throw new MiniLmException("the minilm-embed tokenizer could not be loaded: " + e, e);
        }
    }

    /** Word-piece ids of {@code text}: [CLS] (101), the pieces, [SEP] (102); 2 to 256 of them. */
    public int[] encode(String text) {
        Encoding encoding = tokenizer.encode(text);
        long[] ids = encoding.getIds();
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    /** The word-pieces of {@code text} as strings ([CLS], hello, ,, ...): for tests and docs. */
    public String[] tokens(String text) {
        return tokenizer.encode(text).getTokens();
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
