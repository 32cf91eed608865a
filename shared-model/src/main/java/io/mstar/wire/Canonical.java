package io.mstar.wire;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

import io.mstar.graph.GraphEdge;

/**
 * Immutable, canonical copies for the collections of wire bodies. Maps and sets are sorted by
 * key so that encoding is deterministic (the wire requires sorted sets and sorted non-string-keyed
 * maps; string-keyed objects are sorted too so equal values encode to identical bytes).
 * Null elements, keys and values are rejected: nothing on this wire is a nullable element.
 */
final class Canonical {

    private Canonical() {
    }

    static <T> List<T> requiredList(List<T> list, String field) {
        if (list == null) {
            throw new NullPointerException(field);
        }
        return List.copyOf(list);
    }

    static <T> List<T> optionalList(List<T> list) {
        return list == null ? List.of() : List.copyOf(list);
    }

    /**
     * An {@code inline_data} list of a message that carries {@code edges}: empty, or one entry per descriptor of the
     * edges in order (docs/protocol.md#extensions).
     */
    static List<String> inlineData(List<String> inlineData, List<GraphEdge> edges) {
        List<String> copy = optionalList(inlineData);
        if (!copy.isEmpty()) {
            long described = edges.stream().mapToLong(edge -> edge.tensorInfo().size()).sum();
            if (copy.size() != described) {
                throw new IllegalArgumentException("inline_data has " + copy.size() + " entries for " + described
                        + " tensors");
            }
        }
        return copy;
    }

    static <T extends Comparable<? super T>> SortedSet<T> requiredSet(Collection<T> set, String field) {
        if (set == null) {
            throw new NullPointerException(field);
        }
        return optionalSet(set);
    }

    static <T extends Comparable<? super T>> SortedSet<T> optionalSet(Collection<T> set) {
        if (set == null || set.isEmpty()) {
            return Collections.emptySortedSet();
        }
        return Collections.unmodifiableSortedSet(new TreeSet<>(set));
    }

    static <K extends Comparable<? super K>, V> SortedMap<K, V> requiredMap(Map<K, V> map, String field) {
        if (map == null) {
            throw new NullPointerException(field);
        }
        return optionalMap(map, field);
    }

    /** Like {@link #requiredMap} / {@link #optionalMap}, with each list value copied immutably too. */
    static <K extends Comparable<? super K>, V> SortedMap<K, List<V>> listValues(
            Map<K, List<V>> map, String field, boolean required) {
        if (map == null) {
            if (required) {
                throw new NullPointerException(field);
            }
            return Collections.emptySortedMap();
        }
        TreeMap<K, List<V>> copy = new TreeMap<>();
        for (Map.Entry<K, List<V>> e : map.entrySet()) {
            if (e.getValue() == null) {
                throw new IllegalArgumentException(field + " has a null value");
            }
            copy.put(e.getKey(), List.copyOf(e.getValue()));
        }
        return Collections.unmodifiableSortedMap(copy);
    }

    static <K extends Comparable<? super K>, V> SortedMap<K, V> optionalMap(Map<K, V> map, String field) {
        if (map == null || map.isEmpty()) {
            return Collections.emptySortedMap();
        }
        if (map.values().stream().anyMatch(java.util.Objects::isNull)) {
            throw new IllegalArgumentException(field + " has a null value");
        }
        return Collections.unmodifiableSortedMap(new TreeMap<>(map));
    }
}
