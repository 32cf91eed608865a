package io.mstar.tensor.arena;

import io.mstar.tensor.bookkeeping.TensorBookkeeping;

/**
 * Where the arena reports what it placed: the two bookkeeping calls of the spec
 * ({@code register_shm_segment}, {@code set_shm_placement}) under the same names, so a
 * {@code TensorBookkeeping} can be passed straight through (or adapted with two method references).
 *
 * <p>{@code registerShmSegment} is called on the allocating thread inside the arena's lock (quick, no
 * calls back into the arena); {@code setShmPlacement} on the thread of
 * {@link ShmArena#reportPlacement}, outside it.
 */
public interface ShmPlacementListener {

    /** A new segment exists; called once per segment, before any placement in it is reported. */
    void registerShmSegment(int index, String name);

    /**
     * Placements by segment index ({@code -1}: spilled to the tensor's own file, offset 0). Parallel
     * arrays of equal length; the arena passes fresh arrays, the listener may keep them.
     */
    void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets);

    /** Reports straight to a bookkeeper (the methods are the same two calls). */
    static ShmPlacementListener of(TensorBookkeeping books) {
        return new ShmPlacementListener() {
            @Override
            public void registerShmSegment(int index, String name) {
                books.registerShmSegment(index, name);
            }

            @Override
            public void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets) {
                books.setShmPlacement(uuids, segmentIdxs, offsets);
            }
        };
    }

    /** Reports nothing; for an arena nobody keeps books for (tests, benchmarks). */
    ShmPlacementListener NONE = new ShmPlacementListener() {
        @Override
        public void registerShmSegment(int index, String name) {
            // deliberately nothing
        }

        @Override
        public void setShmPlacement(long[] uuids, int[] segmentIdxs, long[] offsets) {
            // deliberately nothing
        }
    };
}
