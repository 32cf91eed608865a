package io.mstar.worker.kernel.tts;

import java.util.Objects;

/**
 * One request's share of a toy-tts {@code lm} batch: feed {@code tokens} at positions
 * {@code [firstPosition, firstPosition + tokens.length)}, writing their K and V into the KV slots the engine
 * reserved, attending over every earlier position of the request.
 *
 * @param tokens        token ids to feed, in order
 * @param firstPosition the position of {@code tokens[0]}
 * @param pages         the request's page table (pages in position order), covering every position fed
 * @param wantLogits    whether the caller needs the logits after the last token (decode) or not (prefill)
 */
public record LmJob(int[] tokens, int firstPosition, int[] pages, boolean wantLogits) {

    public LmJob {
        Objects.requireNonNull(tokens, "tokens");
        Objects.requireNonNull(pages, "pages");
        if (wantLogits && tokens.length == 0) {
            throw new IllegalArgumentException("logits need at least one token fed");
        }
    }

    /** Positions of the request after this job. */
    public int sequenceLength() {
        return firstPosition + tokens.length;
    }
}
