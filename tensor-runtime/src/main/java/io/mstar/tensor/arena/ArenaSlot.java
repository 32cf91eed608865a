package io.mstar.tensor.arena;

import java.nio.ByteBuffer;

/**
 * A live placement. {@link #fileName()} is what goes into the descriptor's {@code shm_segment} (a
 * segment name, or for a spilled tensor its own file's name) and {@link #offset()} into
 * {@code shm_offset}; {@link #segmentIndex()} is what the bookkeeper sees ({@code -1}: spilled).
 *
 * <p>{@link #buffer()} is a writable view of exactly {@code nbytes}, valid until the slot is freed:
 * the producer writes (or stages a device tensor into) it before publishing the descriptor.
 */
public final class ArenaSlot {

    private final long uuid;
    private final int segmentIndex;
    private final String fileName;
    private final long offset;
    private final long nbytes;
    /** Bytes the slot takes from its segment (nbytes rounded up to the alignment); nbytes when spilled. */
    final long reservedBytes;
    private final ByteBuffer buffer;

    ArenaSlot(long uuid, int segmentIndex, String fileName, long offset, long nbytes, long reservedBytes,
              ByteBuffer buffer) {
        this.uuid = uuid;
        this.segmentIndex = segmentIndex;
        this.fileName = fileName;
        this.offset = offset;
        this.nbytes = nbytes;
        this.reservedBytes = reservedBytes;
        this.buffer = buffer;
    }

    public long uuid() {
        return uuid;
    }

    /** Segment index as registered with the bookkeeper; {@code -1} when spilled. */
    public int segmentIndex() {
        return segmentIndex;
    }

    public boolean spilled() {
        return segmentIndex < 0;
    }

    /** File name inside the arena directory: the descriptor's {@code shm_segment}. */
    public String fileName() {
        return fileName;
    }

    /** Byte offset in that file: the descriptor's {@code shm_offset}. */
    public long offset() {
        return offset;
    }

    public long nbytes() {
        return nbytes;
    }

    /** A fresh writable view (position 0, limit nbytes); views share the memory, not the position. */
    public ByteBuffer buffer() {
        return buffer.duplicate();
    }

    @Override
    public String toString() {
        return "ArenaSlot[uuid=" + uuid + ", " + fileName + "@" + offset + ", nbytes=" + nbytes + "]";
    }
}
