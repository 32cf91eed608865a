package io.mstar.tensor;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.bookkeeping.Collectable;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import reactor.core.publisher.Mono;

/**
 * The worker's tensor store as seen from outside the engine loop (docs/architecture.md#inside-a-service): HTTP
 * handlers, the tensor server, admin and tests ask here, and every call runs on the loop's executor and answers a
 * {@link Mono}. The loop itself calls the {@link TensorStore} directly.
 *
 * <p>Nothing runs until the {@code Mono} is subscribed, and it runs once per subscription. Cancelling after
 * subscribing does not take the task back: a mutation may still happen, and nothing undoes it. A refused operation
 * (a {@code TensorStoreException}, a {@code DeviceException}) is the Mono's error; so is a loop executor that
 * rejects the task (shut down). Results that belong to the store – buffers – stay owned by it.
 *
 * <p>Metrics read only the last {@link TensorStoreSnapshot} published on the loop: after every operation that
 * goes through here, and whenever the loop calls {@link #publishSnapshot()} (taking one is linear in the tensors
 * held, so the loop does so at its own pace, e.g. once per scrape interval, not per batch).
 *
 * <p>Does not create, shut down or close the executor, the store or the devices it is given
 * (docs/architecture.md#whoever-creates-closes); {@link #close()} removes the meters it registered and refuses further
 * calls.
 */
public final class BookkeepingService implements AutoCloseable {

    private final TensorStore store;
    private final Executor loop;
    private final TensorMeters meters;
    private volatile TensorStoreSnapshot snapshot = TensorStoreSnapshot.EMPTY;
    private volatile boolean closed;

    /**
     * @param store    the loop's store; not closed here
     * @param loop     the engine loop's single-thread executor; not shut down here
     * @param registry where the {@link TensorMeters} go
     * @param devices  the devices the meters report on; not closed here
     */
    public BookkeepingService(TensorStore store, Executor loop, MeterRegistry registry,
                              List<? extends Device> devices) {
        this.store = Objects.requireNonNull(store, "store");
        this.loop = Objects.requireNonNull(loop, "loop");
        this.meters = new TensorMeters(registry, this::snapshot, devices);
    }

    // ---- mutations ----

    public Mono<Void> putTensor(String requestId, long uuid, DeviceBuffer tensor, TensorPointerInfo info,
                                ByteBuffer cpuTensor) {
        return run(s -> s.putTensor(requestId, uuid, tensor, info, cpuTensor));
    }

    public Mono<Void> putTensorBatchMulti(List<String> requestIds, long[] uuids, List<? extends DeviceBuffer> tensors,
                                          List<TensorPointerInfo> infos, List<ByteBuffer> cpuTensors) {
        return run(s -> s.putTensorBatchMulti(requestIds, uuids, tensors, infos, cpuTensors));
    }

    public Mono<Void> removeTensor(long uuid) {
        return run(s -> s.removeTensor(uuid));
    }

    /** Request teardown; the number of tensors freed. */
    public Mono<Integer> removeRequest(String requestId) {
        return call(s -> s.removeRequest(requestId));
    }

    public Mono<Void> setMetadata(long uuid, Boolean persist, Boolean memRegistered) {
        return run(s -> s.setMetadata(uuid, persist, memRegistered));
    }

    public Mono<Void> incrementRef(long uuid, int n) {
        return run(s -> s.incrementRef(uuid, n));
    }

    public Mono<Collectable> dereferenceBatch(long[] uuids, int[] counts, boolean cleanup) {
        return call(s -> s.dereferenceBatch(uuids, counts, cleanup));
    }

    public Mono<Void> markForgotten(long[] uuids) {
        return run(s -> s.markForgotten(uuids));
    }

    // ---- lookups (still on the loop: the store's maps are the loop's) ----

    /** The descriptor; empty when there is no record. */
    public Mono<TensorPointerInfo> getInfo(long uuid) {
        return call(s -> s.getInfo(uuid));
    }

    public Mono<Boolean> checkUuidPresence(long uuid) {
        return call(s -> s.checkUuidPresence(uuid));
    }

    public Mono<List<Long>> getAllUuids(String requestId) {
        return call(s -> s.getAllUuids(requestId));
    }

    /**
     * Anything else the store offers, on the loop. {@code action} must not keep the store or hand it to another
     * thread; a null result completes the Mono empty.
     */
    public <T> Mono<T> call(Function<TensorStore, T> action) {
        return Mono.create(sink -> {
            if (closed) {
                sink.error(new IllegalStateException("BookkeepingService closed"));
                return;
            }
            try {
                loop.execute(() -> {
                    T result;
                    try {
                        result = action.apply(store);
                    } catch (Throwable e) {
                        publishQuietly(e);
                        sink.error(e);
                        return;
                    }
                    try {
                        snapshot = store.snapshot();
                    } catch (RuntimeException e) {
                        sink.error(e);
                        return;
                    }
                    sink.success(result);
                });
            } catch (RejectedExecutionException e) {
                sink.error(e);
            }
        });
    }

    // ---- snapshots ----

    /** Takes a fresh snapshot; must run on the loop (the store checks). */
    public TensorStoreSnapshot publishSnapshot() {
        TensorStoreSnapshot taken = store.snapshot();
        snapshot = taken;
        return taken;
    }

    /** The last snapshot the loop published; any thread. */
    public TensorStoreSnapshot snapshot() {
        return snapshot;
    }

    public TensorMeters meters() {
        return meters;
    }

    /** Removes this facade's meters; the executor, store and devices are left to whoever created them. */
    @Override
    public void close() {
        closed = true;
        meters.close();
    }

    private Mono<Void> run(java.util.function.Consumer<TensorStore> action) {
        return call(s -> {
            action.accept(s);
            return null;
        });
    }

    /** After a refused operation the error counts moved; publish them, but never mask the original error. */
    private void publishQuietly(Throwable original) {
        try {
            snapshot = store.snapshot();
        } catch (RuntimeException e) {
            original.addSuppressed(e);
        }
    }
}
