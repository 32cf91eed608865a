package io.mstar.request;

/**
 * Per-request token sampling parameters for one sampling head.
 *
 * @param vocabSize          vocabulary size to sample over, nullable (null: the model's own)
 * @param temperature        softmax temperature; default 0.6
 * @param topK               keep the k most likely tokens, 0 disables; default 0
 * @param topP               nucleus threshold, 1.0 disables; default 1.0
 * @param ignoreEos          keep sampling past an end-of-sequence token; default false
 * @param repetitionPenalty  penalty on already-seen tokens, 1.0 disables; default 1.0
 * @param seed               sampling seed; default 0
 */
public record SamplingConfig(
        Integer vocabSize,
        double temperature,
        int topK,
        double topP,
        boolean ignoreEos,
        double repetitionPenalty,
        long seed) {

    /** Every field at its spec default. */
    public static final SamplingConfig DEFAULT = new SamplingConfig(null, 0.6, 0, 1.0, false, 1.0, 0L);
}
