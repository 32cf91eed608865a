package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorHeartbeat;

class ConductorHeartbeatsTests {

    private record Sent(EntityId worker, Object body, String thread) {
    }

    @Test
    void everyWorkerHearsTheHeartbeatEveryIntervalFromItsOwnThread() {
        List<Sent> sent = new CopyOnWriteArrayList<>();
        List<EntityId> workers = List.of(EntityId.worker(0), EntityId.worker(1));
        ConductorHeartbeats heartbeats = new ConductorHeartbeats(workers, Duration.ofMillis(50),
                (w, b) -> {
                    sent.add(new Sent(w, b, Thread.currentThread().getName()));
                    return CompletableFuture.completedFuture(null);
                });
        heartbeats.start();
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() >= 6);
        } finally {
            heartbeats.stop();
        }
        assertThat(heartbeats.isRunning()).isFalse();
        assertThat(sent).allSatisfy(s -> {
            assertThat(s.body()).isEqualTo(new ConductorHeartbeat(50));
            assertThat(s.thread()).isEqualTo(ConductorHeartbeats.THREAD_NAME);
        });
        assertThat(sent.stream().map(Sent::worker).distinct()).containsExactlyInAnyOrderElementsOf(workers);
    }

    @Test
    void aBlockedOrFailingSendDoesNotStopTheBeat() throws Exception {
        CountDownLatch beats = new CountDownLatch(4);
        ConductorHeartbeats heartbeats = new ConductorHeartbeats(List.of(EntityId.worker(0)), Duration.ofMillis(20),
                (w, b) -> {
                    beats.countDown();
                    throw new IllegalStateException("broker away");
                });
        heartbeats.start();
        try {
            assertThat(beats.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        } finally {
            heartbeats.stop();
        }
    }
}
