package io.mstar.tensor.bookkeeping;

import java.util.Arrays;

/**
 * The arena segments a fast bookkeeper knows: registered ones by index ({@code register_shm_segment}), and every
 * segment name seen, registered or on a descriptor put from a peer, interned for the entry records. Owned by the
 * bookkeeper's thread.
 */
final class ArenaSegments {

    /** Registered segment index -> name id, -1 where none. */
    private int[] byIndex = new int[8];
    private final InternedNames names = new InternedNames();

    ArenaSegments() {
        Arrays.fill(byIndex, -1);
    }

    void register(int idx, String name, ErrorCounts errors) {
        if (idx < 0 || name == null) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "register_shm_segment", "index " + idx + ", name " + name);
        }
        if (idx >= byIndex.length) {
            int old = byIndex.length;
            byIndex = Arrays.copyOf(byIndex, Math.max(idx + 1, old * 2));
            Arrays.fill(byIndex, old, byIndex.length, -1);
        }
        int current = byIndex[idx];
        if (current >= 0 && !names.name(current).equals(name)) {
            throw errors.raise(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID,
                    "register_shm_segment", "segment " + idx + " is already " + names.name(current) + ", not "
                            + name);
        }
        byIndex[idx] = names.id(name);
    }

    /** The name id of registered segment {@code idx}, or -1 when {@code idx} is not registered. */
    int registered(int idx) {
        return idx >= 0 && idx < byIndex.length ? byIndex[idx] : -1;
    }

    /** The id of a segment name, interned if new; -1 for null (no placement). */
    int id(String name) {
        return name == null ? -1 : names.id(name);
    }

    /** The name of id {@code id}; null for -1. */
    String name(int id) {
        return id < 0 ? null : names.name(id);
    }
}
