package io.mstar.tensor.arena;

import java.util.Map;
import java.util.TreeMap;

/**
 * Free extents of one segment, by offset: first-fit take, coalescing give. Not thread-safe (the
 * arena's lock guards it). Sizes are whatever the caller passes (the arena passes aligned sizes, so
 * every extent stays aligned).
 */
final class FreeList {

    private final TreeMap<Long, Long> extents = new TreeMap<>();
    private final long size;

    FreeList(long size) {
        this.size = size;
        extents.put(0L, size);
    }

    /** Offset of the first extent that fits {@code length}, carved off its front; -1 when none fits. */
    long take(long length) {
        for (Map.Entry<Long, Long> e : extents.entrySet()) {
            long offset = e.getKey();
            long free = e.getValue(); // read before removing: TreeMap recycles a removed node for its successor
            if (free >= length) {
                extents.remove(offset);
                if (free > length) {
                    extents.put(offset + length, free - length);
                }
                return offset;
            }
        }
        return -1;
    }

    /** Returns {@code [offset, offset+length)}, merged with free neighbours. */
    void give(long offset, long length) {
        if (offset < 0 || length <= 0 || offset + length > size) {
            throw new ArenaException(ArenaException.Reason.INVALID_ARGUMENT,
                    "extent " + offset + "+" + length + " outside a segment of " + size);
        }
        Map.Entry<Long, Long> before = extents.floorEntry(offset);
        if (before != null && before.getKey() + before.getValue() > offset) {
            throw new ArenaException(ArenaException.Reason.NOT_LIVE, "extent at " + offset + " is already free");
        }
        Map.Entry<Long, Long> after = extents.ceilingEntry(offset);
        if (after != null && offset + length > after.getKey()) {
            throw new ArenaException(ArenaException.Reason.NOT_LIVE, "extent at " + offset + " overlaps a free one");
        }
        long start = offset;
        long end = offset + length;
        if (before != null && before.getKey() + before.getValue() == offset) {
            start = before.getKey();
            extents.remove(start);
        }
        if (after != null && after.getKey() == end) {
            end += after.getValue();
            extents.remove(after.getKey());
        }
        extents.put(start, end - start);
    }

    /** Free extents (for tests and invariant checks). */
    int extentCount() {
        return extents.size();
    }

    long freeBytes() {
        return extents.values().stream().mapToLong(Long::longValue).sum();
    }
}
