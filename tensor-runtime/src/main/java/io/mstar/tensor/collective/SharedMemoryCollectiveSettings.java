package io.mstar.tensor.collective;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * One rank's view of a {@link SharedMemoryCollective}.
 *
 * @param path          the group's file; every rank names the same one, and it names one incarnation of the group
 *                      (a rebuilt group takes a new name, or rank 0 replaces the file before any rank of the new
 *                      group opens it). Under {@link #defaultDirectory()} so that it is memory, not disk.
 * @param rank          this worker's rank, 0 to {@code size - 1}; rank 0 creates the file
 * @param size          ranks in the group, 1 to {@value #MAX_SIZE}
 * @param capacityBytes bytes of one rank's slot, a multiple of 64; larger calls go through in chunks of it, each
 *                      chunk one arrival of every rank. Every rank must use the same. The file holds two slots per
 *                      rank, at most 2 GiB in all (one mapping).
 * @param timeout       the bound on every wait for a peer (and, at the start, for the file and every rank to
 *                      arrive): the worker-loss timeout
 */
public record SharedMemoryCollectiveSettings(Path path, int rank, int size, long capacityBytes, Duration timeout) {

    public static final int MAX_SIZE = 256;
    /** Enough for a decode step's hidden states (32 rows of 8192 floats) in one chunk. */
    public static final long DEFAULT_CAPACITY_BYTES = 1L << 20;

    public SharedMemoryCollectiveSettings {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(timeout, "timeout");
        if (path.getFileName() == null) {
            throw new IllegalArgumentException("path must name a file: " + path);
        }
        if (size < 1 || size > MAX_SIZE) {
            throw new IllegalArgumentException("size must be in 1.." + MAX_SIZE + ": " + size);
        }
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank must be in 0.." + (size - 1) + ": " + rank);
        }
        if (capacityBytes < 64 || capacityBytes % 64 != 0) {
            throw new IllegalArgumentException("capacityBytes must be a positive multiple of 64: " + capacityBytes);
        }
        if (capacityBytes > Integer.MAX_VALUE || CollectiveFile.fileBytes(size, capacityBytes) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("2 slots of " + capacityBytes + " bytes for " + size
                    + " ranks do not fit one mapping (2 GiB)");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
    }

    /**
     * The group {@code group}'s file in {@link #defaultDirectory()} ({@code mstar-collective.<group>}), slots of
     * {@link #DEFAULT_CAPACITY_BYTES}.
     */
    public static SharedMemoryCollectiveSettings of(String group, int rank, int size, Duration timeout) {
        if (group.isEmpty() || group.indexOf('/') >= 0) {
            throw new IllegalArgumentException("group must be non-empty without '/': " + group);
        }
        return new SharedMemoryCollectiveSettings(defaultDirectory().resolve("mstar-collective." + group), rank, size,
                DEFAULT_CAPACITY_BYTES, timeout);
    }

    /** {@code /dev/shm} (tmpfs: the file is memory) where the machine has it, else {@code java.io.tmpdir}. */
    public static Path defaultDirectory() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }
}
