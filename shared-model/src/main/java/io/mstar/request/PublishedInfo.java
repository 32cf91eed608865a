package io.mstar.request;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The per-request state a resource (e.g. the KV cache) publishes for the conductor, so a later
 * forward pass, possibly on another worker, can find what is already resident.
 *
 * @param resourceType  what published it, e.g. {@code "kv_cache"}
 * @param worldSize     ranks of the publishing group; default 1
 * @param sequences     what each rank holds, at most one entry per (rank, label); default empty
 */
public record PublishedInfo(String resourceType, int worldSize, List<PublishedSequence> sequences) {

    public PublishedInfo {
        Objects.requireNonNull(resourceType, "resource_type");
        sequences = sequences == null ? List.of() : List.copyOf(sequences);
        Set<List<Object>> seen = new HashSet<>();
        for (PublishedSequence s : sequences) {
            if (!seen.add(List.of(s.rank(), s.label()))) {
                throw new IllegalArgumentException(
                        "duplicate sequence for rank " + s.rank() + " label " + s.label());
            }
        }
    }

    /**
     * A new value holding this one's sequences updated by {@code other}'s: an entry of
     * {@code other} replaces this one's entry with the same (rank, label) in place, and entries
     * new to this one are appended in {@code other}'s order. The world size stays this one's.
     *
     * @throws IllegalArgumentException when the two come from different resource types
     */
    public PublishedInfo merge(PublishedInfo other) {
        if (!resourceType.equals(other.resourceType)) {
            throw new IllegalArgumentException(
                    "cannot merge " + other.resourceType + " into " + resourceType);
        }
        Map<List<Object>, PublishedSequence> merged = new LinkedHashMap<>();
        for (PublishedSequence s : sequences) {
            merged.put(List.of(s.rank(), s.label()), s);
        }
        for (PublishedSequence s : other.sequences) {
            merged.put(List.of(s.rank(), s.label()), s);
        }
        return new PublishedInfo(resourceType, worldSize, new ArrayList<>(merged.values()));
    }
}
