package io.mstar.worker.kernel.minilm;

import java.util.Arrays;
import java.util.List;

/**
 * Sentences of different lengths padded to the longest, right-aligned padding: what every encoder kernel takes.
 * The attention mask is implied by {@code lengths}: row {@code b}'s tokens {@code 0 .. lengths[b]-1} are real.
 *
 * @param ids     {@code [batch, length]} word-piece ids, 0 ({@code [PAD]}) past each sentence's end
 * @param lengths word-pieces per sentence, each at least 1
 * @param batch   sentences
 * @param length  the longest sentence
 */
public record PaddedBatch(int[] ids, int[] lengths, int batch, int length) {

    public static PaddedBatch of(List<int[]> sentences) {
        int batch = sentences.size();
        int length = 0;
        for (int[] s : sentences) {
            if (s.length < 1) {
                throw new IllegalArgumentException("a sentence needs at least one word-piece");
            }
            length = Math.max(length, s.length);
        }
        int[] ids = new int[batch * length];
        int[] lengths = new int[batch];
        for (int b = 0; b < batch; b++) {
            int[] s = sentences.get(b);
            System.arraycopy(s, 0, ids, b * length, s.length);
            lengths[b] = s.length;
        }
        return new PaddedBatch(ids, lengths, batch, length);
    }

    /**
     * {@link #of(List)} padded further, to {@code batch} sentences of {@code length} word-pieces (a captured step's
     * shape): the extra sentences are one {@code [PAD]} each, so that every row's arithmetic stays finite.
     */
    public static PaddedBatch of(List<int[]> sentences, int batch, int length) {
        PaddedBatch tight = of(sentences);
        if (batch < tight.batch() || length < tight.length()) {
            throw new IllegalArgumentException(tight.batch() + " sentences of up to " + tight.length()
                    + " word-pieces do not fit " + batch + " x " + length);
        }
        int[] ids = new int[batch * length];
        int[] lengths = new int[batch];
        Arrays.fill(lengths, 1);
        for (int b = 0; b < tight.batch(); b++) {
            System.arraycopy(tight.ids(), b * tight.length(), ids, b * length, tight.lengths()[b]);
            lengths[b] = tight.lengths()[b];
        }
        return new PaddedBatch(ids, lengths, batch, length);
    }

    /** Rows of the token-major activations: {@code batch * length}. */
    public int rows() {
        return batch * length;
    }
}
