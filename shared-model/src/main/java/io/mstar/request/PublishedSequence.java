package io.mstar.request;

import java.util.List;
import java.util.Objects;

/**
 * One sequence a resource holds for a request on one rank, e.g. the KV-cache pages of a label.
 *
 * @param rank         tensor-parallel rank holding it
 * @param label        the sequence's label within the request (e.g. the node or cfg branch)
 * @param seqLen       tokens held
 * @param pageIndices  pages of the resource's pool holding them, in sequence order
 */
public record PublishedSequence(int rank, String label, int seqLen, List<Integer> pageIndices) {

    public PublishedSequence {
        Objects.requireNonNull(label, "label");
        pageIndices = List.copyOf(Objects.requireNonNull(pageIndices, "page_indices"));
    }
}
