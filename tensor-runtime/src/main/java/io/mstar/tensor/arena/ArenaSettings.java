package io.mstar.tensor.arena;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How a producer's shared-memory arena is laid out.
 *
 * @param directory     where segment and spill files live; default {@code /dev/shm} (tmpfs, so a
 *                      "file" is memory). Consumers on the same host must see the same directory.
 * @param entity        owning entity id ({@code worker-3}, {@code conductor}); goes into every file
 *                      name so an operator and the sweeper can tell whose file it is. No dots.
 * @param segmentBytes  size of one segment; default 256 MiB. Larger segments waste more when idle,
 *                      smaller ones spill sooner. At most {@link Integer#MAX_VALUE} (one mapping).
 * @param maxSegments   growth cap; default 8. Beyond it a tensor spills to its own file, which costs a
 *                      file create and delete per tensor instead of a free-list operation.
 * @param alignment     placement alignment in bytes, a power of two; default 256 (a device copy's
 *                      preferred alignment, and keeps slots off each other's cache lines).
 */
public record ArenaSettings(Path directory, String entity, long segmentBytes, int maxSegments, int alignment) {

    public static final Path DEFAULT_DIRECTORY = Path.of("/dev/shm");
    public static final long DEFAULT_SEGMENT_BYTES = 256L << 20;
    public static final int DEFAULT_MAX_SEGMENTS = 8;
    public static final int DEFAULT_ALIGNMENT = 256;

    public ArenaSettings {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(entity, "entity");
        if (entity.isEmpty() || entity.indexOf('.') >= 0 || entity.indexOf('/') >= 0) {
            throw new IllegalArgumentException("entity must be non-empty without '.' or '/': " + entity);
        }
        if (segmentBytes <= 0 || segmentBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("segmentBytes must be in 1.." + Integer.MAX_VALUE + ": " + segmentBytes);
        }
        if (maxSegments < 0) {
            throw new IllegalArgumentException("maxSegments must be >= 0: " + maxSegments);
        }
        if (alignment <= 0 || Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two: " + alignment);
        }
    }

    /** Defaults for everything but the entity. */
    public static ArenaSettings defaults(String entity) {
        return new ArenaSettings(DEFAULT_DIRECTORY, entity, DEFAULT_SEGMENT_BYTES, DEFAULT_MAX_SEGMENTS,
                DEFAULT_ALIGNMENT);
    }
}
