package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.util.unit.DataSize;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.graph.WorkerGraph;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.InboxPosition;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Baseline;
import io.mstar.worker.kernel.KernelCatalog;

/** One worker in a test: its real data plane (a host device unless given one, store, arena, HTTP tensor server) and engine loop. */
final class TestWorker implements AutoCloseable {

    final EntityId id;
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final WorkerDataPlane data;
    final EngineLoop loop;
    final EngineMeters meters;

    final KvCaches kv;

    TestWorker(int ordinal, Path arenaDirectory, InProcessBroker broker, KernelCatalog kernels, List<WorkerGraph> graphs) {
        this(ordinal, arenaDirectory, broker, kernels, graphs, Map.of());
    }

    /** With KV caches for the models of {@code kvCaches} (model name to its kv_cache settings). */
    TestWorker(int ordinal, Path arenaDirectory, InProcessBroker broker, KernelCatalog kernels, List<WorkerGraph> graphs,
            Map<String, KvCacheConfig> kvCaches) {
        this(ordinal, arenaDirectory, broker, d -> kernels, graphs, () -> new HostDevice(HostDevice.NAME, 64 << 20), kvCaches);
    }

    /** A worker on the device {@code devices} opens, running the kernels {@code kernelsFor} gives for it. */
    TestWorker(int ordinal, Path arenaDirectory, InProcessBroker broker, Function<Device, KernelCatalog> kernelsFor,
            List<WorkerGraph> graphs, Supplier<Device> devices) {
        this(ordinal, arenaDirectory, broker, kernelsFor, graphs, devices, Map.of());
    }

    /** A worker on the device {@code devices} opens, with KV caches (a GPU test of a KV model). */
    TestWorker(int ordinal, Path arenaDirectory, InProcessBroker broker, Function<Device, KernelCatalog> kernelsFor,
            List<WorkerGraph> graphs, Supplier<Device> devices, Map<String, KvCacheConfig> kvCaches) {
        this(ordinal, arenaDirectory, broker, kernelsFor, graphs, devices, kvCaches, EngineProperties.defaults());
    }

    /** ... with engine settings of its own (the step pipeline off, speculation on). */
    TestWorker(int ordinal, Path arenaDirectory, InProcessBroker broker, Function<Device, KernelCatalog> kernelsFor,
            List<WorkerGraph> graphs, Supplier<Device> devices, Map<String, KvCacheConfig> kvCaches,
            EngineProperties engine) {
        this.id = EntityId.worker(ordinal);
        WorkerDataProperties settings = new WorkerDataProperties("127.0.0.1", 0, "127.0.0.1", arenaDirectory,
                DataSize.ofKilobytes(256), 2, DataSize.ofMegabytes(64));
        this.data = new WorkerDataPlane(id, settings, devices.get(), registry);
        KernelCatalog kernels;
        try {
            kernels = kernelsFor.apply(data.device());
        } catch (RuntimeException e) {
            data.close();
            throw e;
        }
        EngineLoop[] self = new EngineLoop[1];
        this.meters = new EngineMeters(registry, () -> self[0].snapshot());
        this.kv = new KvCaches(kvCaches, registry, engine.kvHostPoolFactor());
        Outbox outbox = broker.outboxOf(id);
        // The inbox is never positioned: no SetupDone, the conductor here is the test.
        self[0] = new EngineLoop(id, Duration.ofSeconds(2), outbox, new InboxPosition(), new SetupDoneAcks(),
                executor -> new WorkerEngine(id, engine, graphs, kernels, data.parts(), outbox,
                        executor, meters, kv), meters);
        this.loop = self[0];
        broker.register(id, loop);
        loop.start();
    }

    /** The engine's state now, taken on the loop. */
    EngineSnapshot snapshot() {
        return loop.ask(s -> s.engine().snapshotNow()).block(Duration.ofSeconds(5));
    }

    /** Speculated steps this worker's engine ran, and speculated calls it voided, dropped or discarded. */
    long[] speculation() {
        return loop.ask(s -> new long[] {s.engine().speculatedSteps(), s.engine().voidedSpeculatedCalls()})
                .block(Duration.ofSeconds(5));
    }

    /** Requests the engine holds now, taken on the loop. */
    int requests() {
        return loop.ask(st -> st.engine().snapshotNow().requests()).block(Duration.ofSeconds(5));
    }

    long deviceBytes() {
        return data.device().stats().bytesInUse();
    }

    /** This worker's KV pools: bytes taken, requests holding pages, pages in use on the device and in host pools. */
    record KvState(long poolBytes, int requests, int pagesInUse, int hostPagesInUse) {
    }

    /** The KV pools now, taken on the loop, which owns them. */
    KvState kvState() {
        return loop.ask(st -> new KvState(kv.poolBytes(), kv.requestsHoldingPages(),
                kv.stats().values().stream().mapToInt(p -> p.pagesInUse()).sum(),
                kv.hostStats().values().stream().mapToInt(p -> p.pagesInUse()).sum())).block(Duration.ofSeconds(5));
    }

    /**
     * Every KV page is free again; answers the pools, which are taken at a node's first batch and kept until
     * shutdown, so a test can count their bytes as baseline.
     */
    KvState assertNoKvPagesHeld() {
        return settled(() -> {
            KvState state = kvState();
            assertThat(state.requests()).as("%s requests holding KV pages", id).isZero();
            assertThat(state.pagesInUse()).as("%s KV pages in use", id).isZero();
            assertThat(state.hostPagesInUse()).as("%s KV pages in host pools", id).isZero();
            return state;
        });
    }

    /**
     * The leak check a test ends with: no request, live tensor, read in flight or arena slot left, and exactly
     * {@code deviceBytes} on the device (what outlives requests: KV pools, uploaded weights). Answers the snapshot
     * it checked, for a test that asserts more of it.
     */
    EngineSnapshot assertAtBaseline(long deviceBytes) {
        return settled(() -> {
            EngineSnapshot s = snapshot();
            Baseline.of(id.value())
                    .zero("requests", s.requests())
                    .zero("live tensors", s.tensors().liveTensors())
                    .zero("reads in flight", s.readsInFlight())
                    .equal("device bytes (what outlives requests is the baseline)", deviceBytes(), deviceBytes)
                    .zero("arena slots", data.arenaOccupancy().liveSlots())
                    .check();
            return s;
        });
    }

    /**
     * {@code check}'s answer once it passes, within 5 s: a removal that landed while its request was in a step on the
     * device completes with that step, a moment after the conductor sent it.
     */
    private static <T> T settled(Supplier<T> check) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            try {
                return check.get();
            } catch (AssertionError e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                try {
                    Thread.sleep(2);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** The kv_cache settings of each model of {@code deployment} that has one, as the constructors take them. */
    static Map<String, KvCacheConfig> kvCachesOf(DeploymentConfig deployment) {
        Map<String, KvCacheConfig> kv = new HashMap<>();
        deployment.models().forEach(m -> m.kvCache().ifPresent(c -> kv.put(m.name(), c)));
        return kv;
    }

    @Override
    public void close() {
        loop.stop();
        meters.close();
        data.close();
    }
}
