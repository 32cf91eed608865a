package io.mstar.tensor.arena;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The consumer side of other processes' arenas on this host: opens their files read-only and copies
 * bytes out. Segment mappings are cached by name (a producer keeps its segments until it closes, and a
 * restarted producer uses new names); spill files are per tensor and short-lived, so they are read
 * with a positional read and never cached.
 *
 * <p>Thread-safe: copies use absolute positions on shared read-only mappings.
 */
public final class ArenaReader implements AutoCloseable {

    private final Path directory;
    private final ConcurrentHashMap<String, MappedByteBuffer> segments = new ConcurrentHashMap<>();

    public ArenaReader(Path directory) {
        this.directory = directory;
    }

    public Path directory() {
        return directory;
    }

    /**
     * Whether {@code fileName} (a descriptor's {@code shm_segment}) is an arena file present here. Asks
     * the file system every time (a stat) rather than trusting a cached mapping: a closed producer's
     * mapping stays readable after its files are gone, and must not serve stale bytes. A gone file's
     * mapping is dropped.
     */
    public boolean visible(String fileName) {
        if (fileName == null || ArenaFileName.parse(fileName).isEmpty()) {
            return false;
        }
        if (Files.isRegularFile(directory.resolve(fileName))) {
            return true;
        }
        segments.remove(fileName);
        return false;
    }

    /**
     * Copies {@code nbytes} at {@code offset} of arena file {@code fileName} into {@code destination}
     * at its position, and advances the position.
     *
     * @throws ArenaException {@code IO} when the file is gone or shorter than the range
     */
    public void read(String fileName, long offset, int nbytes, ByteBuffer destination) {
        ArenaFileName name = ArenaFileName.parse(fileName).orElseThrow(() ->
                new ArenaException(ArenaException.Reason.INVALID_ARGUMENT, "not an arena file: " + fileName));
        if (offset < 0 || nbytes < 0 || destination.remaining() < nbytes) {
            throw new ArenaException(ArenaException.Reason.INVALID_ARGUMENT, "cannot copy " + nbytes + " bytes at "
                    + offset + " into " + destination.remaining() + " remaining");
        }
        if (name.isSegment()) {
            MappedByteBuffer map = segments.computeIfAbsent(fileName, this::mapReadOnly);
            if (offset + nbytes > map.capacity()) {
                throw new ArenaException(ArenaException.Reason.INVALID_ARGUMENT,
                        fileName + " has " + map.capacity() + " bytes, asked " + offset + "+" + nbytes);
            }
            int at = destination.position();
            destination.put(at, map, (int) offset, nbytes);
            destination.position(at + nbytes);
        } else {
            readSpill(fileName, offset, nbytes, destination);
        }
    }

    /**
     * Whether {@code fileName}, an arena file name {@link #visible} accepted, names a segment, which is read through a
     * cached mapping, rather than a spill file, which is opened and read for each copy. Looks at the last part only.
     */
    public static boolean isSegment(String fileName) {
        return fileName != null && ArenaFileName.namesSegment(fileName);
    }

    /** Drops the cached mapping of a segment (its producer went away). */
    public void evict(String fileName) {
        segments.remove(fileName);
    }

    /** Drops every cached mapping; the memory goes when the collector drops the buffers. */
    @Override
    public void close() {
        segments.clear();
    }

    private MappedByteBuffer mapReadOnly(String fileName) {
        Path path = directory.resolve(fileName);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            return channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
        } catch (IOException e) {
            throw new ArenaException(ArenaException.Reason.IO, "cannot map " + path, e);
        }
    }

    private void readSpill(String fileName, long offset, int nbytes, ByteBuffer destination) {
        Path path = directory.resolve(fileName);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            ByteBuffer window = destination.duplicate();
            window.limit(window.position() + nbytes);
            long at = offset;
            while (window.hasRemaining()) {
                int n = channel.read(window, at);
                if (n < 0) {
                    throw new ArenaException(ArenaException.Reason.IO,
                            path + " ended at " + at + ", asked " + offset + "+" + nbytes);
                }
                at += n;
            }
            destination.position(destination.position() + nbytes);
        } catch (NoSuchFileException e) {
            throw new ArenaException(ArenaException.Reason.IO, "gone: " + path, e);
        } catch (IOException e) {
            throw new ArenaException(ArenaException.Reason.IO, "cannot read " + path, e);
        }
    }
}
