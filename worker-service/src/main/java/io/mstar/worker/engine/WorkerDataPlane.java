package io.mstar.worker.engine;

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
import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.tensor.transport.ReaderSettings;
import io.mstar.tensor.transport.TensorPublisher;
import io.mstar.tensor.transport.TensorReader;
import io.mstar.tensor.transport.TensorServer;
import io.mstar.tensor.transport.TensorServerSettings;

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

    /** A data plane that presents and checks no read grants: for in-process tests on one host. */
    public WorkerDataPlane(EntityId self, WorkerDataProperties settings, Device device, MeterRegistry registry) {
        this(self, settings, device, registry, ReadGrants.disabled());
    }

    /** A data plane whose reads carry grants from {@code grants} and whose tensor server checks them; plain HTTP. */
    public WorkerDataPlane(EntityId self, WorkerDataProperties settings, Device device, MeterRegistry registry,
            ReadGrants grants) {
        this(self, settings, device, registry, grants, DataPlaneTls.disabled());
    }

    /**
     * A data plane whose reads carry grants from {@code grants} and whose tensor server checks them, both over
     * {@code tls} (docs/security.md#tls-on-the-data-port): with TLS the server serves HTTPS only and the reader reads
     * {@code https://} only. Same-host reads through the arena do not touch the network and are the same either way.
     */
    public WorkerDataPlane(EntityId self, WorkerDataProperties settings, Device device, MeterRegistry registry,
            ReadGrants grants, DataPlaneTls tls) {
        this.device = device;
        FastTensorBookkeeping books = new FastTensorBookkeeping();
        this.arena = new ShmArena(new ArenaSettings(settings.arenaDirectory(), self.value(),
                settings.arenaSegment().toBytes(), settings.arenaSegments(), ArenaSettings.DEFAULT_ALIGNMENT),
                ShmPlacementListener.of(books));
        // mstar_worker_arena_{reserved,used}_bytes, _segments, _spilled_files: occupancy for dashboards and leak checks.
        this.arenaMeters = new ArenaMeters(arena, registry, "worker");
        TensorPublisher publisher = new TensorPublisher(arena);
        TensorStore store = new TensorStore(books, publisher);
        String host = TensorServerSettings.advertise(settings.bindAddress(), settings.advertisedHost());
        this.server = TensorServer.start(publisher.source(), new TensorServerSettings(settings.bindAddress(),
                settings.port(), host, 2, "worker", tls), grants, registry);
        this.arenaReader = new ArenaReader(settings.arenaDirectory());
        this.reader = new TensorReader(ReaderSettings.defaults("worker", new HashSet<>(List.of(host, "127.0.0.1", "localhost")))
                .withArenaDirectory(settings.arenaDirectory()).withTls(tls), arenaReader, registry, grants, self.value());
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
