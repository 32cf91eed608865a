package io.mstar.worker.engine;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.messaging.EntityId;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.TensorUuids;
import io.mstar.tensor.arena.ArenaMeters;
import io.mstar.tensor.arena.ArenaReader;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import io.mstar.tensor.bookkeeping.FastTensorBookkeeping;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.transport.ReaderSettings;
import io.mstar.tensor.transport.TensorPublisher;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;

/**
 * Builds a worker's data plane — device, store, arena, publisher, tensor server on the data port, reader — and closes
 * what it built in the safe order (docs/architecture.md#whoever-creates-closes): the store must be emptied on the
 * engine loop first; then the server (ending its reads, which runs deferred slot frees), the arena, the reader, the
 * device.
 */
public final class WorkerDataPlane implements AutoCloseable {

    private final Device device;
    private final ShmArena arena;
    private final ArenaMeters arenaMeters;
    private final TensorServer server;
    private final ArenaReader arenaReader;
    private final TensorReader reader;
    private final DataPlane parts;

    public WorkerDataPlane(EntityId self, WorkerDataProperties settings, Device device, MeterRegistry registry) {
        this.device = device;
        FastTensorBookkeeping books = new FastTensorBookkeeping();
        this.arena = new ShmArena(new ArenaSettings(settings.arenaDirectory(), self.value(),
                settings.arenaSegment().toBytes(), settings.arenaSegments(), ArenaSettings.DEFAULT_ALIGNMENT),
                ShmPlacementListener.of(books));
        // mstar_worker_arena_{reserved,used}_bytes, _segments, _spilled_files: occupancy for dashboards and leak checks.
        this.arenaMeters = new ArenaMeters(arena, registry, "worker");
        TensorPublisher publisher = new TensorPublisher(arena);
        TensorStore store = new TensorStore(books, publisher);
        String host = settings.advertisedHost().isBlank() ? localAddress() : settings.advertisedHost();
        this.server = TensorServer.start(publisher.source(), settings.bindHost(), settings.port(), host, 2);
        this.arenaReader = new ArenaReader(settings.arenaDirectory());
        this.reader = new TensorReader(ReaderSettings.defaults("worker", new HashSet<>(List.of(host, "127.0.0.1", "localhost")))
                .withArenaDirectory(settings.arenaDirectory()), arenaReader, registry);
        this.parts = new DataPlane(self, device, store, publisher, reader, TensorUuids.forEntity(self.value()),
                server.sessionId());
    }

    /** A host device of {@code settings.hostMemory()} bytes, for workers without a GPU. */
    public static HostDevice hostDevice(WorkerDataProperties settings) {
        return new HostDevice(HostDevice.NAME, settings.hostMemory().toBytes());
    }

    public DataPlane parts() {
        return parts;
    }

    public Device device() {
        return device;
    }

    /** The arena's occupancy, any thread (leak checks, metrics). */
    public io.mstar.tensor.arena.ArenaOccupancy arenaOccupancy() {
        return arena.occupancy();
    }

    public String sessionId() {
        return server.sessionId();
    }

    private static String localAddress() {
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            return "127.0.0.1";
        }
    }

    @Override
    public void close() {
        arenaMeters.close();
        try {
            server.close();
        } finally {
            try {
                arena.close();
            } finally {
                try {
                    reader.close();
                    arenaReader.close();
                } finally {
                    device.close();
                }
            }
        }
    }
}
