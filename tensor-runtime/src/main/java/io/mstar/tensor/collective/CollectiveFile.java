package io.mstar.tensor.collective;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The memory-mapped file of a {@link SharedMemoryCollective} and its layout (docs/tensor-runtime.md#collectives):
 *
 * <pre>
 *   0    header: magic, layout version, size, capacity, creator pid; at 64 the abort word (0, or who ended the
 *        group and why)
 *   128  one 128-byte line per rank: its round counter, then the descriptor of its round of each parity
 *   …    from the next 4 KiB: two slots of capacity bytes per rank, rank r's slot of parity p at (2r + p) · capacity
 * </pre>
 *
 * Counters and the abort word are read and written through a {@link VarHandle} (acquire/release, volatile), so what a
 * rank wrote before publishing a round is visible to every rank, thread or process, that sees the round published.
 * Each rank's line is a cache line pair of its own: peers spinning on it do not slow the others' writes.
 */
final class CollectiveFile {

    static final long MAGIC = 0x4c4f_4352_4154_534dL; // "MSTARCOL" in little-endian bytes
    static final int VERSION = 1;

    private static final int SIZE_AT = 12;
    private static final int CAPACITY_AT = 16;
    private static final int CREATOR_AT = 24;
    private static final int ABORT_AT = 64;
    private static final int LINES_AT = 128;
    private static final int LINE_BYTES = 128;
    private static final int PAGE = 4096;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    /** Only the owner reads and writes the group's file: its ranks run as one user (docs/security.md). */
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private final Path path;
    private final MappedByteBuffer map;
    private final int size;
    private final long capacity;
    private final long slotsAt;

    private CollectiveFile(Path path, MappedByteBuffer map, int size, long capacity) {
        this.path = path;
        this.map = map;
        this.size = size;
        this.capacity = capacity;
        this.slotsAt = slotsAt(size);
    }

    /** The file's length for {@code size} ranks with slots of {@code capacity} bytes. */
    static long fileBytes(int size, long capacity) {
        return slotsAt(size) + 2L * size * capacity;
    }

    private static long slotsAt(int size) {
        long lines = LINES_AT + (long) LINE_BYTES * size;
        return (lines + PAGE - 1) / PAGE * PAGE;
    }

    /**
     * Rank 0: writes a new file beside {@code path} and renames it into place, replacing a leftover, so that a rank
     * opening the path sees either no file or a whole one.
     */
    static CollectiveFile create(SharedMemoryCollectiveSettings s) throws IOException {
        Path tmp = s.path().resolveSibling(s.path().getFileName() + "." + ProcessHandle.current().pid() + "."
                + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1) + ".tmp");
        long bytes = fileBytes(s.size(), s.capacityBytes());
        try {
            Files.createDirectories(s.path().toAbsolutePath().getParent());
            MappedByteBuffer map;
            try (FileChannel channel = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.READ, StandardOpenOption.WRITE), OWNER_ONLY)) {
                channel.write(ByteBuffer.allocate(1), bytes - 1); // sizes it; tmpfs backs pages as they are written
                map = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            }
            map.order(ByteOrder.nativeOrder());
            map.putInt(8, VERSION).putInt(SIZE_AT, s.size()).putLong(CAPACITY_AT, s.capacityBytes())
                    .putLong(CREATOR_AT, ProcessHandle.current().pid());
            LONGS.setRelease(map, 0, MAGIC);
            Files.move(tmp, s.path(), StandardCopyOption.ATOMIC_MOVE);
            return new CollectiveFile(s.path(), map, s.size(), s.capacityBytes());
        } catch (IOException | UncheckedIOException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
    }

    /**
     * What {@link #open} found: the file, or why not: not there yet ({@code settled} false: look again), or made with
     * other settings by a live rank 0 ({@code settled} true: a mistake of the caller's, looking again will not help).
     */
    record Opened(CollectiveFile file, String problem, boolean settled) {

        static Opened notYet(String why) {
            return new Opened(null, why, false);
        }
    }

    /**
     * A rank other than 0: the group's file if rank 0 has put it in place, else why not yet (none, a leftover of a
     * process that is gone, a group that was aborted), or that it was made with other settings.
     */
    static Opened open(SharedMemoryCollectiveSettings s) throws IOException {
        MappedByteBuffer map;
        try (FileChannel channel = FileChannel.open(s.path(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (channel.size() < LINES_AT) {
                return Opened.notYet(s.path() + " is " + channel.size() + " bytes, not a collective's file");
            }
            map = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size());
        } catch (NoSuchFileException e) {
            return Opened.notYet("no file " + s.path() + " (rank 0 creates it)");
        }
        map.order(ByteOrder.nativeOrder());
        if ((long) LONGS.getAcquire(map, 0) != MAGIC) {
            return Opened.notYet(s.path() + " is not a collective's file");
        }
        long creator = map.getLong(CREATOR_AT);
        if (!ProcessHandle.of(creator).map(ProcessHandle::isAlive).orElse(false)) {
            return Opened.notYet(s.path() + " is a leftover of process " + creator + ", which is gone");
        }
        int version = map.getInt(8);
        int size = map.getInt(SIZE_AT);
        long capacity = map.getLong(CAPACITY_AT);
        if (version != VERSION || size != s.size() || capacity != s.capacityBytes()
                || map.capacity() != fileBytes(size, capacity)) {
            return new Opened(null, s.path() + " holds version " + version + ", " + size + " ranks, slots of "
                    + capacity + " bytes in " + map.capacity() + " bytes; this rank expects version " + VERSION + ", "
                    + s.size() + " ranks, slots of " + s.capacityBytes() + " bytes", true);
        }
        CollectiveFile file = new CollectiveFile(s.path(), map, size, capacity);
        if (file.aborted() != null) {
            // a group that ended (a peer was lost): rank 0 replaces the file when it joins again
            return Opened.notYet(s.path() + " is a group that was aborted; rank 0 makes a new one");
        }
        return new Opened(file, null, true);
    }

    Path path() {
        return path;
    }

    /** The last round {@code rank} published. */
    long round(int rank) {
        return (long) LONGS.getAcquire(map, line(rank));
    }

    /** Publishes {@code round} for {@code rank}: its slot and descriptor, written before, are visible with it. */
    void publish(int rank, long round) {
        LONGS.setRelease(map, line(rank), round);
    }

    /** What {@code rank}'s round of {@code parity} is ({@link SharedMemoryCollective} encodes it); read on arrival. */
    long descriptor(int rank, int parity) {
        return map.getLong(line(rank) + 8 + 8 * parity);
    }

    void describe(int rank, int parity, long descriptor) {
        map.putLong(line(rank) + 8 + 8 * parity, descriptor);
    }

    /** Who ended the group, and why. */
    record Abort(int rank, CollectiveException.Reason reason) {
    }

    /** The first rank's abort of the group, or null while the group stands. */
    Abort aborted() {
        long word = (long) LONGS.getVolatile(map, ABORT_AT);
        return word == 0 ? null
                : new Abort((int) word - 1, CollectiveException.Reason.values()[(int) (word >>> 32)]);
    }

    /** Ends the group for every rank, unless a rank did already (the first reason stays). */
    void abort(int rank, CollectiveException.Reason reason) {
        LONGS.compareAndSet(map, ABORT_AT, 0L, (long) reason.ordinal() << 32 | (rank + 1L));
    }

    /** The whole mapping, native order; slots at {@link #slot}. Absolute access only: the buffer is shared. */
    ByteBuffer map() {
        return map;
    }

    int slot(int rank, int parity) {
        return (int) (slotsAt + (2L * rank + parity) * capacity);
    }

    /** Removes the file (rank 0, at close): mappings ranks still hold stay valid until dropped. */
    void delete() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // tmpfs: nothing fails here in practice; a leftover is replaced by the next group of this name
        }
    }

    private int line(int rank) {
        if (rank < 0 || rank >= size) {
            throw new IndexOutOfBoundsException("rank " + rank + " of " + size);
        }
        return LINES_AT + LINE_BYTES * rank;
    }
}
