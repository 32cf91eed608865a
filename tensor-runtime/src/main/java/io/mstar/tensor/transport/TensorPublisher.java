package io.mstar.tensor.transport;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.LongKeys;
import io.mstar.tensor.TensorRelease;
import io.mstar.tensor.TensorStore;
import io.mstar.tensor.arena.ArenaSlot;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.bookkeeping.TensorStoreException;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.agrona.collections.LongHashSet;

/**
 * The producer's publish path (docs/architecture.md#tensor-lifetime, docs/architecture.md#data-plane): makes stored
 * tensors readable by peers before their descriptors leave this process, and takes them back when the store frees them.
 *
 * <p>{@link #publish} stages each tensor into a slot of the producer's {@link ShmArena} (a peer on this host
 * reads the slot; one on another host gets the same bytes from the {@link TensorServer}, which serves
 * {@link #source()}), stamps the placement on the bookkeeper, sets {@code mem_registered}, and answers the
 * descriptors to put on the wire. Only what is published can be read: a descriptor is never handed out for
 * bytes that are not in place.
 *
 * <p>It is also the store's {@link TensorRelease}: wire it into the {@link TensorStore} it publishes from, so
 * that when the store removes a tensor (collectable, then removed) the device buffer is freed at once – peers
 * read the staged copy, never the device buffer – and the arena slot is released through {@link ServedTensors},
 * which frees it now or, while a server read has it pinned, at that read's last unpin. A peer reading the arena
 * directly takes no pin: that it has finished is what its ack (or, at teardown, {@code ReadsDone}) says, and the
 * store only removes a tensor after those (docs/architecture.md#tensor-lifetime).
 *
 * <p>Threads: owned by the engine loop, like the store – {@link #publish} and {@link #release} run there and
 * the published-uuid set is not thread-safe. The server's I/O threads touch only {@link ServedTensors}
 * (thread-safe), and a deferred slot free runs on the unpinning I/O thread, which is why the arena's free is
 * thread-safe. Nothing here is closed: the arena, the device and the server belong to whoever created them
 * (docs/architecture.md#whoever-creates-closes). At shutdown the owner removes the store's tensors, then closes the
 * server (ending its reads, which runs the deferred frees), and only then the arena: a free reaching a closed arena
 * fails.
 */
public final class TensorPublisher implements TensorRelease {

    private final ShmArena arena;
    private final ServedTensors served;
    /** Published and not yet released: the uuids whose free must also give back an arena slot. Loop-owned. */
    private final LongHashSet published = LongKeys.set();

    /**
     * @param arena this producer's arena; it must report to the bookkeeper of the store published from
     *              ({@code ShmPlacementListener.of(store.bookkeeping())}), since placement goes through it
     */
    public TensorPublisher(ShmArena arena) {
        this(arena, new ServedTensors());
    }

    /** @param served where published bytes are served from; the publisher feeds it, the server reads it */
    public TensorPublisher(ShmArena arena, ServedTensors served) {
        this.arena = Objects.requireNonNull(arena, "arena");
        this.served = Objects.requireNonNull(served, "served");
    }

    /** What {@link TensorServer} serves: the published tensors, thread-safe. */
    public ServedTensors source() {
        return served;
    }

    /** {@link #publish(TensorStore, long[])} for one tensor. */
    public TensorPointerInfo publish(TensorStore store, long uuid) {
        return publish(store, new long[] {uuid}).get(0);
    }

    /**
     * Makes {@code uuids} readable by peers and answers their descriptors, in order, ready for the wire
     * ({@code shm_segment}/{@code shm_offset} filled in, or a null segment when the arena spilled: then a peer
     * reads over HTTP, which serves the spill file's mapping).
     *
     * <p>A tensor stored with a host copy ({@code cpu_tensor}) is copied from it: those bytes are final when the
     * producer stores them, so nothing waits for the device. For the others, each device they live on is
     * synchronized once before copying: the kernels that produced them may still be running on its streams, and a
     * descriptor leaves the process only after the device work that produced its tensor has completed
     * (docs/architecture.md#tensor-lifetime). A per-tensor event recorded by the kernel launcher would wait for
     * less; this is the simple correct form until the engine records one.
     *
     * <p>All or nothing: the batch is validated first (stored here, not yet published, no repeats), and a
     * failure past that – an arena or device error, a bookkeeper refusal – frees the slots already taken and
     * publishes none, leaving every tensor as it was except possibly {@code mem_registered}.
     *
     * @throws TensorStoreException UNKNOWN_UUID for a tensor not stored; {@link IllegalStateException} for one
     *         already published or repeated in the batch
     */
    public List<TensorPointerInfo> publish(TensorStore store, long[] uuids) {
        List<DeviceBuffer> buffers = new ArrayList<>(uuids.length);
        LongHashSet seen = LongKeys.set();
        for (long uuid : uuids) {
            buffers.add(store.getTensor(uuid)); // refuses an unknown uuid, counted by the store
            if (published.contains(uuid) || !seen.add(uuid)) {
                throw new IllegalStateException("tensor " + uuid + " is already published or repeated in the batch");
            }
        }
        List<ByteBuffer> hostCopies = new ArrayList<>(uuids.length);
        Map<Device, Boolean> synced = new HashMap<>();
        for (int i = 0; i < uuids.length; i++) {
            ByteBuffer cpu = store.getCpuTensor(uuids[i]);
            hostCopies.add(cpu);
            if (cpu == null) {
                synced.computeIfAbsent(buffers.get(i).device(), d -> {
                    d.synchronize();
                    return Boolean.TRUE;
                });
            }
        }
        List<ArenaSlot> slots = new ArrayList<>(uuids.length);
        try {
            for (int i = 0; i < uuids.length; i++) {
                DeviceBuffer buffer = buffers.get(i);
                ArenaSlot slot = arena.allocate(uuids[i], buffer.nbytes());
                slots.add(slot);
                // On a HostDevice this is one memcpy. The zero-copy path – a host tensor allocated in the arena
                // to begin with (§10), so publishing only reports where it already is – belongs here, once the
                // host device can allocate from the arena.
                if (hostCopies.get(i) != null) {
                    slot.buffer().duplicate().put(hostCopies.get(i));
                } else {
                    buffer.device().copyToHost(buffer, 0, slot.buffer());
                }
            }
            arena.reportPlacement(slots); // -> the bookkeeper's setShmPlacement; -1 for a spilled slot
            for (long uuid : uuids) {
                store.setMetadata(uuid, null, true);
            }
        } catch (RuntimeException e) {
            for (ArenaSlot slot : slots) {
                try {
                    arena.free(slot); // nothing published yet: no peer can hold this slot's name
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        List<TensorPointerInfo> infos = new ArrayList<>(uuids.length);
        for (int i = 0; i < uuids.length; i++) {
            ArenaSlot slot = slots.get(i);
            // The slot now belongs to the served entry: it alone frees it, after the last read.
            served.publish(uuids[i], slot.buffer(), () -> arena.free(slot));
            published.add(uuids[i]);
            infos.add(store.getInfo(uuids[i]));
        }
        return infos;
    }

    /** Whether {@code uuid} is published and not yet released. */
    public boolean isPublished(long uuid) {
        return published.contains(uuid);
    }

    /** Tensors published and not yet released. */
    public int publishedCount() {
        return published.size();
    }

    /**
     * The store removed {@code uuid}: frees the device buffer now (peers read the staged copy, not it) and, if
     * the tensor was published, releases its slot – freed now, or at the last unpin of a server read. A later
     * read of the uuid gets 410.
     */
    @Override
    public void release(long uuid, DeviceBuffer buffer) {
        try {
            buffer.device().free(buffer);
        } finally {
            if (published.remove(uuid)) {
                served.release(uuid);
            }
        }
    }
}
