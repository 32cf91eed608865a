package io.mstar.conductor.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.mstar.graph.TensorPointerInfo;

/**
 * A finished pass of one partition, aggregated over its workers (distinct worker graph and worker; replicated
 * fields from the first TP rank only).
 *
 * @param partition        the partition
 * @param step             the step the pass ran (its walk, inputs and iteration counts as given)
 * @param passIndex        0 for the partition's first pass
 * @param persisted        {@code persist_signals} of this pass, accumulated over workers
 * @param newTokenCounts   {@code new_token_counts} of this pass
 * @param tokensProduced   tokens the partition has produced so far, this pass included
 * @param partitionDone    a worker reported {@code partition_done} (the final stream chunk was consumed)
 */
public record PassResult(String partition, Step step, int passIndex, Map<String, List<TensorPointerInfo>> persisted,
        Map<String, Integer> newTokenCounts, int tokensProduced, boolean partitionDone) {

    public PassResult {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(step, "step");
        persisted = Map.copyOf(persisted);
        newTokenCounts = Map.copyOf(newTokenCounts);
    }

    /** Tokens produced by this pass over every counted signal. */
    public int tokensThisPass() {
        return newTokenCounts.values().stream().mapToInt(Integer::intValue).sum();
    }
}
