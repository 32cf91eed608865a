package io.mstar.tensor.arena;

/**
 * A snapshot of an arena, for metrics and leak checks.
 *
 * @param reservedBytes bytes of tmpfs held: every segment's full size plus every spill file
 * @param usedBytes     bytes held by live slots (aligned sizes in segments, exact sizes of spill files)
 * @param liveSlots     live placements, spilled ones included
 * @param segments      segments created (they are kept until close)
 * @param spilledFiles  live spill files
 */
public record ArenaOccupancy(long reservedBytes, long usedBytes, int liveSlots, int segments, int spilledFiles) {
}
