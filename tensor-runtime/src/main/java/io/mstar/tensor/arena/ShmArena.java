package io.mstar.tensor.arena;

import io.mstar.tensor.LongKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * A producer's shared-memory arena: named segments (files in {@link ArenaSettings#directory()},
 * memory-mapped) with first-fit placement over a coalescing free list, grown one segment at a time up
 * to {@link ArenaSettings#maxSegments()}; a tensor that fits nowhere (or is larger than a segment)
 * spills to a file of its own. Consumers on the same host open the files read-only
 * ({@link ArenaReader}); nothing in another process ever writes them.
 *
 * <p>Threads: the engine loop allocates; frees come from the loop and, when a read pinned the tensor
 * while it was released, from the tensor server's I/O thread that unpinned it. So allocate and free
 * take one lock; inside it is only free-list work, except when a segment or spill file is created
 * (rare: growth is bounded, spills are the overflow path).
 *
 * <p>{@link #free} hands the slot back for reuse at once: the caller guarantees that no peer may still
 * read it (docs/architecture.md#tensor-lifetime: the tensor's acks are in, and no server read has it pinned).
 *
 * <p>Whoever creates the arena closes it: {@link #close()} deletes its segments and spill files. A
 * process that died without closing leaves files named for its pid; the next arena opened on the same
 * directory sweeps them ({@link #sweepDeadOwners}).
 */
public final class ShmArena implements AutoCloseable {

    private final ArenaSettings settings;
    private final ShmPlacementListener listener;
    private final String incarnation;
    private final long pid = ProcessHandle.current().pid();
    private final ReentrantLock lock = new ReentrantLock();

    // guarded by lock
    private final List<Segment> segments = new ArrayList<>();
    private final Long2ObjectHashMap<ArenaSlot> live = LongKeys.map();
    private long usedBytes;
    private long spilledBytes;
    private int spilledFiles;
    private boolean closed;

    /**
     * Opens an arena (no file is created until the first allocation) after sweeping the directory of
     * files whose owner process is gone.
     */
    public ShmArena(ArenaSettings settings, ShmPlacementListener listener) {
        this.settings = settings;
        this.listener = listener;
        this.incarnation = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);
        try {
            Files.createDirectories(settings.directory());
        } catch (IOException e) {
            throw new ArenaException(ArenaException.Reason.IO, "cannot create " + settings.directory(), e);
        }
        sweepDeadOwners(settings.directory());
    }

    public ArenaSettings settings() {
        return settings;
    }

    /**
     * Places {@code nbytes} for {@code uuid}: first fit in the existing segments, else in a new one
     * (registered with the listener before this returns), else in a spill file. The placement itself is
     * reported later, by {@link #reportPlacement}, once the tensor is known to the bookkeeper.
     */
    public ArenaSlot allocate(long uuid, long nbytes) {
        if (nbytes < 0 || nbytes > Integer.MAX_VALUE) {
            throw new ArenaException(ArenaException.Reason.INVALID_ARGUMENT,
                    "nbytes must be in 0.." + Integer.MAX_VALUE + ": " + nbytes);
        }
        long aligned = Math.max(settings.alignment(), align(nbytes));
        lock.lock();
        try {
            checkOpen();
            if (live.containsKey(uuid)) {
                throw new ArenaException(ArenaException.Reason.DUPLICATE_UUID, "uuid " + uuid + " already placed");
            }
            ArenaSlot slot = null;
            if (aligned <= settings.segmentBytes()) {
                for (Segment segment : segments) {
                    slot = segment.place(uuid, nbytes, aligned);
                    if (slot != null) {
                        break;
                    }
                }
                if (slot == null && segments.size() < settings.maxSegments()) {
                    Segment segment = createSegment(segments.size());
                    segments.add(segment);
                    listener.registerShmSegment(segment.index, segment.name);
                    slot = segment.place(uuid, nbytes, aligned);
                }
            }
            if (slot == null) {
                slot = spill(uuid, nbytes);
                spilledBytes += nbytes;
                spilledFiles++;
            } else {
                usedBytes += aligned;
            }
            live.put(uuid, slot);
            return slot;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stamps the placement of {@code slots} with one {@code setShmPlacement} call (segment index, or
     * -1 for a spilled tensor, and offset). Separate from {@link #allocate} because the bookkeeper
     * refuses placement for a uuid it does not hold yet, and memory is placed before the tensor is
     * put: the producer calls this when it registers the tensors for sending, as the spec's
     * {@code register_for_send} does.
     */
    public void reportPlacement(List<ArenaSlot> slots) {
        long[] uuids = new long[slots.size()];
        int[] segmentIdxs = new int[slots.size()];
        long[] offsets = new long[slots.size()];
        for (int i = 0; i < uuids.length; i++) {
            ArenaSlot slot = slots.get(i);
            uuids[i] = slot.uuid();
            segmentIdxs[i] = slot.segmentIndex();
            offsets[i] = slot.offset();
        }
        listener.setShmPlacement(uuids, segmentIdxs, offsets);
    }

    /**
     * Returns the slot: its bytes may be handed to the next allocation at once, and a spill file is
     * deleted. The caller guarantees no peer may still read it. Freeing a slot that is not live here
     * (a double free) is an error, never a silent return.
     */
    public void free(ArenaSlot slot) {
        lock.lock();
        try {
            checkOpen();
            if (live.get(slot.uuid()) != slot) {
                throw new ArenaException(ArenaException.Reason.NOT_LIVE, slot + " is not live in this arena");
            }
            live.remove(slot.uuid());
            if (slot.spilled()) {
                spilledBytes -= slot.nbytes();
                spilledFiles--;
                deleteQuietly(settings.directory().resolve(slot.fileName()));
            } else {
                segments.get(slot.segmentIndex()).release(slot.offset(), slot.reservedBytes);
                usedBytes -= slot.reservedBytes;
            }
        } finally {
            lock.unlock();
        }
    }

    public ArenaOccupancy occupancy() {
        lock.lock();
        try {
            long reserved = (long) segments.size() * settings.segmentBytes() + spilledBytes;
            return new ArenaOccupancy(reserved, usedBytes + spilledBytes, live.size(), segments.size(), spilledFiles);
        } finally {
            lock.unlock();
        }
    }

    /** Name of segment {@code index}, as registered; for a reader resolving a bookkeeper index. */
    public String segmentName(int index) {
        lock.lock();
        try {
            return segments.get(index).name;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Deletes every segment and spill file of this arena (clean shutdown). Mappings other processes
     * hold stay readable until they drop them; nothing new can open the files. Idempotent.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (ArenaSlot slot : live.values()) {
                if (slot.spilled()) {
                    deleteQuietly(settings.directory().resolve(slot.fileName()));
                }
            }
            for (Segment segment : segments) {
                deleteQuietly(settings.directory().resolve(segment.name));
            }
            live.clear();
            segments.clear();
            usedBytes = 0;
            spilledBytes = 0;
            spilledFiles = 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Deletes the arena files in {@code directory} whose owner pid is not a live process, and returns
     * their names. A live owner's files are never touched (a pid reused by an unrelated live process
     * keeps a dead owner's files until that process ends too: the safe side). Files that are not arena
     * files are ignored.
     */
    public static List<String> sweepDeadOwners(Path directory) {
        List<String> removed = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, ArenaFileName.PREFIX + ".*")) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                Optional<ArenaFileName> parsed = ArenaFileName.parse(name);
                if (parsed.isEmpty()) {
                    continue;
                }
                boolean alive = ProcessHandle.of(parsed.get().pid()).map(ProcessHandle::isAlive).orElse(false);
                if (!alive && Files.deleteIfExists(file)) {
                    removed.add(name);
                }
            }
        } catch (IOException e) {
            throw new ArenaException(ArenaException.Reason.IO, "cannot sweep " + directory, e);
        }
        return removed;
    }

    private long align(long nbytes) {
        long mask = settings.alignment() - 1L;
        return (nbytes + mask) & ~mask;
    }

    private void checkOpen() {
        if (closed) {
            throw new ArenaException(ArenaException.Reason.CLOSED, "arena of " + settings.entity() + " is closed");
        }
    }

    private Segment createSegment(int index) {
        String name = ArenaFileName.segment(settings.entity(), pid, incarnation, index);
        return new Segment(index, name, mapNew(name, settings.segmentBytes()), settings.segmentBytes());
    }

    private ArenaSlot spill(long uuid, long nbytes) {
        String name = ArenaFileName.spill(settings.entity(), pid, incarnation, uuid);
        MappedByteBuffer map = mapNew(name, nbytes);
        return new ArenaSlot(uuid, -1, name, 0, nbytes, nbytes, map);
    }

    /**
     * Segments and spill files hold every tensor a producer stages: readable by their owner alone (a same-host reader
     * runs as the same user, in the same pod), never by other local users (docs/security.md).
     */
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private MappedByteBuffer mapNew(String name, long size) {
        Path path = settings.directory().resolve(name);
        try (FileChannel channel = FileChannel.open(path, Set.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE), OWNER_ONLY)) {
            if (size > 0) { // one byte at the end sizes the file; tmpfs backs pages as they are written
                channel.write(ByteBuffer.allocate(1), size - 1);
            }
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, size);
        } catch (IOException | UncheckedIOException e) {
            deleteQuietly(path);
            throw new ArenaException(ArenaException.Reason.IO, "cannot create " + path + " of " + size + " bytes", e);
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // a leftover is swept at the next start-up; nothing better to do during a free or close
        }
    }

    /** One mapped segment and its free extents. Guarded by the arena's lock. */
    private static final class Segment {
        final int index;
        final String name;
        final MappedByteBuffer map;
        final FreeList free;

        Segment(int index, String name, MappedByteBuffer map, long size) {
            this.index = index;
            this.name = name;
            this.map = map;
            this.free = new FreeList(size);
        }

        ArenaSlot place(long uuid, long nbytes, long aligned) {
            long offset = free.take(aligned);
            if (offset < 0) {
                return null;
            }
            ByteBuffer view = map.slice((int) offset, (int) nbytes);
            return new ArenaSlot(uuid, index, name, offset, nbytes, aligned, view);
        }

        void release(long offset, long aligned) {
            free.give(offset, aligned);
        }
    }
}
