package io.mstar.stack;

import java.util.ArrayList;
import java.util.List;

/**
 * What the {@code counter} model must answer, computed independently of the runtime from the
 * rules in {@code CounterModel}'s javadoc: {@code s0 = 2 * sum(tokens) + len(tokens)}, then tokens
 * {@code s0 + 1, s0 + 2, ...} up to {@code maxTokens} of them or up to and including
 * {@code stopAt}, and the same tokens times ten from {@code detok} in chunks of two.
 */
record CounterOracle(List<Integer> prefillOut, List<Integer> tokens, List<List<Integer>> textChunks) {

    static CounterOracle of(List<Integer> input, int maxTokens, Integer stopAt) {
        int s0 = 2 * input.stream().mapToInt(Integer::intValue).sum() + input.size();
        List<Integer> tokens = new ArrayList<>();
        for (int v = s0 + 1; tokens.size() < maxTokens; v++) {
            tokens.add(v);
            if (stopAt != null && v == stopAt) {
                break;
            }
        }
        List<List<Integer>> chunks = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i += 2) {
            chunks.add(tokens.subList(i, Math.min(tokens.size(), i + 2)).stream().map(t -> t * 10).toList());
        }
        return new CounterOracle(List.of(s0), tokens, chunks);
    }

    /** Every detok value in order, whatever the chunking (the final chunk may be empty). */
    List<Integer> text() {
        return textChunks.stream().flatMap(List::stream).toList();
    }
}
