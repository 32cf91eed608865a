package io.mstar.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OwnerLoopTests {

    private static final String NAME = "mstar-test-owner-loop";
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final List<String> log = new ArrayList<>();
    private final AtomicReference<Thread> boundOwner = new AtomicReference<>();
    private final OwnerLoop<List<String>> loop =
            new OwnerLoop<>(NAME, log, Duration.ofMillis(20), boundOwner::set, now -> { });

    @AfterEach
    void stop() {
        loop.stop();
    }

    @Test
    void commandsRunOnTheNamedThreadInSubmissionOrder() {
        loop.start();
        for (int i = 0; i < 100; i++) {
            String entry = Integer.toString(i);
            loop.submit(() -> log.add(Thread.currentThread().getName() + ":" + entry));
        }

        List<String> seen = loop.ask(List::copyOf).block(WAIT);

        assertThat(seen).hasSize(100);
        for (int i = 0; i < 100; i++) {
            assertThat(seen.get(i)).isEqualTo(NAME + ":" + i);
        }
        assertThat(boundOwner.get().getName()).isEqualTo(NAME);
    }

    @Test
    void askEmitsTheQueryValueFromTheOwnerThread() {
        loop.start();

        assertThat(loop.ask(state -> Thread.currentThread().getName()).block(WAIT)).isEqualTo(NAME);
        assertThat(loop.threadName()).isEqualTo(NAME);
    }

    @Test
    void askEmitsTheQueryError() {
        loop.start();

        assertThatThrownBy(() -> loop.ask(state -> { throw new IllegalArgumentException("boom"); }).block(WAIT))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("boom");
    }

    @Test
    void aThrowingCommandDoesNotKillTheLoop() {
        loop.start();
        loop.submit(() -> { throw new IllegalStateException("bad message"); });
        loop.submit(() -> log.add("after"));

        assertThat(loop.ask(List::copyOf).block(WAIT)).containsExactly("after");
        assertThat(loop.isRunning()).isTrue();
    }

    @Test
    void theTickRunsOnTheOwnerThreadAfterCommandsAndTheHeartbeatStaysFresh() throws InterruptedException {
        CountDownLatch ticks = new CountDownLatch(5);
        AtomicReference<String> tickThread = new AtomicReference<>();
        OwnerLoop<List<String>> ticking = new OwnerLoop<>(NAME + "-ticking", log, Duration.ofMillis(10), owner -> { },
                now -> {
                    tickThread.set(Thread.currentThread().getName());
                    ticks.countDown();
                });
        ticking.start();
        try {
            assertThat(ticks.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(tickThread.get()).isEqualTo(NAME + "-ticking");
            assertThat(ticking.heartbeatAge()).isLessThan(Duration.ofMillis(500));
        } finally {
            ticking.stop();
        }
    }

    @Test
    void theHeartbeatAgesWhileTheLoopIsBusy() throws InterruptedException {
        loop.start();
        CountDownLatch release = occupy(loop);
        Thread.sleep(200);

        assertThat(loop.heartbeatAge()).isGreaterThanOrEqualTo(Duration.ofMillis(200));

        release.countDown();
        assertThat(loop.ask(state -> "turned").block(WAIT)).isEqualTo("turned");
    }

    @Test
    void eachCommandReportsHowLongItWaitedOnTheOwnerThreadIncludingTheTurnAheadOfIt() throws InterruptedException {
        List<Long> waits = new ArrayList<>();
        List<String> reportedOn = new ArrayList<>();
        OwnerLoop<List<String>> timed = new OwnerLoop<>(NAME + "-timed", log, Duration.ofMillis(20), owner -> { },
                now -> { }, nanos -> {
                    waits.add(nanos);
                    reportedOn.add(Thread.currentThread().getName());
                });
        timed.start();
        try {
            CountDownLatch release = occupy(timed);
            timed.submit(() -> log.add("queued behind"));
            Thread.sleep(150);
            release.countDown();

            // Read on the loop: the ask is a third command, reported before it runs.
            List<Long> seen = timed.ask(state -> List.copyOf(waits)).block(WAIT);
            assertThat(seen).hasSize(3);
            assertThat(seen.get(1)).as("waited behind the busy command").isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(150));
            assertThat(seen).allSatisfy(nanos -> assertThat(nanos).isNotNegative());
            assertThat(timed.ask(state -> List.copyOf(reportedOn)).block(WAIT)).containsOnly(NAME + "-timed");
        } finally {
            timed.stop();
        }
    }

    @Test
    void stopEndsTheThreadAndLaterCommandsAreRefused() {
        loop.start();
        Thread owner = loop.ask(state -> Thread.currentThread()).block(WAIT);
        assertThat(owner.isAlive()).isTrue();

        loop.stop();

        assertThat(owner.isAlive()).isFalse();
        assertThat(loop.isRunning()).isFalse();
        assertThatThrownBy(() -> loop.submit(() -> log.add("late")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(NAME);
        assertThatThrownBy(() -> loop.ask(state -> "late").block(WAIT))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(NAME);
    }

    /** Keeps {@code owner} busy in one command until the returned latch is released; returns once it runs. */
    private static CountDownLatch occupy(OwnerLoop<?> owner) throws InterruptedException {
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        owner.submit(() -> {
            busy.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(busy.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        return release;
    }

    @Test
    void stopRunsTheLastCommandOnTheOwnerAfterWhatWasQueuedThenStops() {
        loop.start();
        loop.submit(() -> log.add("queued"));

        loop.stop(state -> state.add("last on " + Thread.currentThread().getName()));

        assertThat(loop.isRunning()).isFalse();
        assertThat(log).containsExactly("queued", "last on " + NAME);
    }

    @Test
    void aFailingLastCommandStillStopsTheLoop() {
        loop.start();

        loop.stop(state -> { throw new IllegalStateException("shutdown failed"); });

        assertThat(loop.isRunning()).isFalse();
        assertThatThrownBy(() -> loop.submit(() -> { })).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aLoopNeverStartedSkipsTheLastCommand() {
        long started = System.nanoTime();

        loop.stop(state -> state.add("last"));

        assertThat(log).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("no wait for an owner that never ran")
                .isLessThan(Duration.ofSeconds(1));
    }
}
