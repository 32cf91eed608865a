package io.mstar.tensor;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import io.mstar.tensor.bookkeeping.TensorStoreException;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BookkeepingServiceTests {

    private static final String LOOP = "mstar-worker-3-engine-loop";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ExecutorService loop = Executors.newSingleThreadExecutor(r -> new Thread(r, LOOP));
    private final HostDevice device = new HostDevice("host", 1 << 20);
    private final TensorStore store = new TensorStore(new PlainTensorBookkeeping());
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final BookkeepingService service = new BookkeepingService(store, loop, registry, List.of(device));
    private final StoreFixture names = new StoreFixture(new PlainTensorBookkeeping());

    @AfterEach
    void nothingLeaksAndNothingIsLeftRunning() throws Exception {
        try {
            if (!loop.isShutdown()) {
                // Straight on the loop, not through the facade (a test may have closed it).
                assertThat(loop.submit(store::liveTensorCount).get(10, TimeUnit.SECONDS)).isZero();
                assertThat(loop.submit(store::bytesByDevice).get(10, TimeUnit.SECONDS)).isEmpty();
                assertThat(service.snapshot().liveTensors()).isZero();
            }
            assertThat(device.stats().bytesInUse()).isZero();
        } finally {
            service.close();
            loop.shutdown();
            assertThat(loop.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            device.close();
        }
    }

    /** Allocates on the loop (the device is the loop's too) and stores through the facade. */
    private long put(String requestId, int nbytes) {
        long uuid = names.uuids.next();
        HostBuffer buffer = device.allocate(nbytes);
        service.putTensor(requestId, uuid, buffer, names.info(uuid, buffer), null).block(WAIT);
        return uuid;
    }

    private double gauge(TensorMeters.Definition d, String tagValue) {
        return registry.get(d.declaration().name()).tag(d.declaration().tagKeys().get(0), tagValue).gauge().value();
    }

    private double counter(TensorMeters.Definition d, String tagValue) {
        return registry.get(d.declaration().name()).tag(d.declaration().tagKeys().get(0), tagValue).functionCounter()
                .count();
    }

    @Test
    void everyCallRunsOnTheLoopThread() {
        assertThat(service.call(s -> Thread.currentThread().getName()).block(WAIT)).isEqualTo(LOOP);
        long uuid = put("a", 8);
        // The store is now the loop's: this thread is refused.
        assertThatThrownBy(() -> store.getTensor(uuid)).isInstanceOf(IllegalStateException.class);
        assertThat(service.call(s -> {
            s.removeTensor(uuid);
            return Thread.currentThread().getName();
        }).block(WAIT)).isEqualTo(LOOP);
    }

    @Test
    void nothingRunsUntilSubscribed() {
        long uuid = put("a", 8);
        var removal = service.removeTensor(uuid);
        assertThat(service.checkUuidPresence(uuid).block(WAIT)).isTrue();
        removal.block(WAIT);
        assertThat(service.checkUuidPresence(uuid).block(WAIT)).isFalse();
    }

    @Test
    void liveTensorsByStateAndBytesFollowTheStoreAndReturnToBaseline() {
        long owned = put("a", 100);
        long awaiting = put("a", 200);
        long persisted = put("b", 300);
        service.incrementRef(awaiting, 2).block(WAIT);
        service.setMetadata(awaiting, null, true).block(WAIT);
        service.setMetadata(persisted, true, null).block(WAIT);

        assertThat(gauge(TensorMeters.Definition.TENSORS_LIVE, "owned")).isEqualTo(1);
        assertThat(gauge(TensorMeters.Definition.TENSORS_LIVE, "awaiting_ack")).isEqualTo(1);
        assertThat(gauge(TensorMeters.Definition.TENSORS_LIVE, "persisted")).isEqualTo(1);
        assertThat(gauge(TensorMeters.Definition.TENSOR_MEMORY, "host")).isEqualTo(600);
        assertThat(gauge(TensorMeters.Definition.DEVICE_MEMORY_USED, "host")).isEqualTo(600);
        assertThat(counter(TensorMeters.Definition.DEVICE_ALLOCATIONS, "host")).isEqualTo(3);
        assertThat(counter(TensorMeters.Definition.DEVICE_FREES, "host")).isZero();

        // Both acks arrive: no longer awaiting, collectable, dropped with cleanup, then freed.
        var collectable = service.dereferenceBatch(new long[] {awaiting}, new int[] {2}, true).block(WAIT);
        assertThat(collectable.uuids()).containsExactly(awaiting);
        assertThat(gauge(TensorMeters.Definition.TENSORS_LIVE, "awaiting_ack")).isZero();
        assertThat(gauge(TensorMeters.Definition.TENSORS_LIVE, "owned")).isEqualTo(2);
        service.removeTensor(awaiting).block(WAIT);
        assertThat(gauge(TensorMeters.Definition.TENSOR_MEMORY, "host")).isEqualTo(400);

        assertThat(service.removeRequest("a").block(WAIT)).isEqualTo(1);
        assertThat(service.removeRequest("b").block(WAIT)).isEqualTo(1);
        for (String state : new String[] {"owned", "awaiting_ack", "persisted"}) {
            assertThat(gauge(TensorMeters.Definition.TENSORS_LIVE, state)).as(state).isZero();
        }
        assertThat(gauge(TensorMeters.Definition.TENSOR_MEMORY, "host")).isZero();
        assertThat(gauge(TensorMeters.Definition.DEVICE_MEMORY_USED, "host")).isZero();
        assertThat(counter(TensorMeters.Definition.DEVICE_FREES, "host")).isEqualTo(3);
        assertThat(owned).isNotEqualTo(persisted);
    }

    @Test
    void aRefusedOperationIsTheMonosErrorAndIsCounted() {
        long unknown = names.uuids.next();
        assertThatThrownBy(() -> service.removeTensor(unknown).block(WAIT))
                .isInstanceOfSatisfying(TensorStoreException.class, e -> {
                    assertThat(e.reason()).isEqualTo(TensorStoreException.Reason.UNKNOWN_UUID);
                    assertThat(e.uuid()).isEqualTo(unknown);
                });
        assertThatThrownBy(() -> service.incrementRef(unknown, 1).block(WAIT))
                .isInstanceOf(TensorStoreException.class);
        assertThat(counter(TensorMeters.Definition.TENSOR_ERRORS, "unknown_uuid")).isEqualTo(2);
        assertThat(counter(TensorMeters.Definition.TENSOR_ERRORS, "duplicate_uuid")).isZero();
        assertThat(service.getInfo(unknown).block(WAIT)).as("no descriptor: empty, not an error").isNull();
    }

    @Test
    void theScrapeShowsExactlyTheDeclaredMeters() {
        put("a", 8);
        Set<String> expected = Arrays.stream(TensorMeters.Definition.values())
                .map(d -> d.declaration().prometheusName())
                .collect(Collectors.toSet());
        Set<String> scraped = registry.scrape().lines()
                .filter(l -> l.startsWith("mstar_"))
                .map(l -> l.substring(0, l.indexOf('{')))
                .collect(Collectors.toSet());
        assertThat(scraped).isEqualTo(expected);
        assertThat(registry.scrape()).contains("mstar_worker_tensors_live{state=\"owned\"} 1")
                .contains("mstar_worker_device_memory_used_bytes{device=\"host\"} 8");
        service.removeRequest("a").block(WAIT);
    }

    @Test
    void closeRemovesEveryMeterAndRefusesFurtherCalls() {
        assertThat(registry.getMeters()).isNotEmpty();
        service.close();
        assertThat(registry.getMeters()).isEmpty();
        assertThatThrownBy(() -> service.checkUuidPresence(1).block(WAIT)).isInstanceOf(IllegalStateException.class);
        assertThat(loop.isShutdown()).as("the executor is not the facade's to shut down").isFalse();
    }

    @Test
    void manyThreadsAskingAtOnceAreServedOneAtATimeOnTheLoop() throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(8, r -> new Thread(r, "test-caller"));
        try {
            List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
            for (int t = 0; t < 8; t++) {
                String request = "r" + t;
                done.add(callers.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        put(request, 16);
                    }
                    assertThat(service.getAllUuids(request).block(WAIT)).hasSize(50);
                    assertThat(service.removeRequest(request).block(WAIT)).isEqualTo(50);
                    return null;
                }));
            }
            for (var f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            callers.shutdown();
        }
        assertThat(device.stats().frees()).isEqualTo(400);
        assertThat(counter(TensorMeters.Definition.DEVICE_FREES, "host")).isEqualTo(400);
    }

    @Test
    void deviceCountersSurviveGarbageCollection() {
        put("gc", 8);
        for (int i = 0; i < 5; i++) {
            System.gc();
        }
        // Micrometer holds a function counter's state weakly; a collected one would read 0.
        assertThat(counter(TensorMeters.Definition.DEVICE_ALLOCATIONS, "host")).isEqualTo(1);
        service.removeRequest("gc").block(WAIT);
        assertThat(counter(TensorMeters.Definition.DEVICE_FREES, "host")).isEqualTo(1);
    }

    @Test
    void aLoopThatNoLongerAcceptsWorkFailsTheMono() {
        loop.shutdown();
        assertThatThrownBy(() -> service.checkUuidPresence(1).block(WAIT))
                .isInstanceOf(RejectedExecutionException.class);
    }
}
