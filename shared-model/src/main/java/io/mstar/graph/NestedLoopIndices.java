package io.mstar.graph;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Where execution stands across nested loops at one moment: used to decide whether a freshly
 * received loop stop is newer than the last one applied, so a loop is not stopped twice when
 * messages are reordered.
 *
 * @param loopNameOrder  loop names, outermost first
 * @param loopIndices    each loop's current iteration; a loop missing here counts as iteration 0
 * @param wgFwdPassIdx   the worker graph's forward-pass index, compared before any loop
 */
public record NestedLoopIndices(List<String> loopNameOrder, Map<String, Integer> loopIndices, int wgFwdPassIdx) {

    public NestedLoopIndices {
        loopNameOrder = List.copyOf(Objects.requireNonNull(loopNameOrder, "loop_name_order"));
        loopIndices = Collections.unmodifiableSortedMap(
                new TreeMap<>(Objects.requireNonNull(loopIndices, "loop_indices")));
        if (loopIndices.containsValue(null)) {
            throw new IllegalArgumentException("loop_indices has a null iteration");
        }
    }

    /**
     * Whether this position is strictly later than {@code other} in the loops enclosing
     * {@code targetLoopName}: the forward-pass index first, then each loop of
     * {@link #loopNameOrder()} outer to inner, stopping before {@code targetLoopName} (all loops
     * when it is null). Equal positions are not greater; a null {@code other} is always smaller.
     */
    public boolean labelContextGt(NestedLoopIndices other, String targetLoopName) {
        if (other == null) {
            return true;
        }
        if (wgFwdPassIdx != other.wgFwdPassIdx) {
            return wgFwdPassIdx > other.wgFwdPassIdx;
        }
        for (String name : loopNameOrder) {
            if (name.equals(targetLoopName)) {
                break;
            }
            int ours = loopIndices.getOrDefault(name, 0);
            int theirs = other.loopIndices.getOrDefault(name, 0);
            if (ours != theirs) {
                return ours > theirs;
            }
        }
        return false;
    }

    /** The later of the two positions; this one on a tie or when {@code other} is null. */
    public NestedLoopIndices max(NestedLoopIndices other) {
        if (other == null) {
            return this;
        }
        return other.labelContextGt(this, null) ? other : this;
    }
}
