package io.mstar.worker.kv;

import java.util.Collection;
import java.util.Set;

import io.mstar.request.SamplingConfig;

/**
 * When a request's generation ends: on an end-of-sequence token unless {@code ignoreEos}, or once it has
 * produced {@code maxTokens}. An EOS that is also the last allowed token reports EOS, the model's own end.
 *
 * @param eosTokenIds the model's end-of-sequence ids
 * @param maxTokens the request's output-token budget ({@code CurrentForwardPassInfo.max_tokens}), {@code >= 0}
 * @param ignoreEos keep going past EOS ({@code SamplingConfig.ignore_eos}; benchmarks)
 */
public record StopCriteria(Set<Integer> eosTokenIds, int maxTokens, boolean ignoreEos) {

    public StopCriteria {
        eosTokenIds = Set.copyOf(eosTokenIds);
        if (maxTokens < 0) {
            throw new IllegalArgumentException("maxTokens must be >= 0: " + maxTokens);
        }
    }

    public static StopCriteria of(Collection<Integer> eosTokenIds, int maxTokens, SamplingConfig sampling) {
        return new StopCriteria(Set.copyOf(eosTokenIds), maxTokens, sampling.ignoreEos());
    }

    /**
     * @param token the token just sampled
     * @param tokensGenerated tokens produced so far, this one included
     */
    public StopReason check(int token, int tokensGenerated) {
        if (!ignoreEos && eosTokenIds.contains(token)) {
            return StopReason.EOS;
        }
        return tokensGenerated >= maxTokens ? StopReason.MAX_TOKENS : StopReason.NONE;
    }
}
