package io.mstar.loop;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.Mono;

/**
 * One named thread that owns a piece of mutable state {@code S} (docs/architecture.md#one-owner-thread-per-state):
 * other threads {@link #submit} commands or {@link #ask} through a {@link Mono}, and read only what the loop publishes,
 * its {@link #heartbeatAge()}. The conductor's lifecycle loop and the worker's engine loop both compose one.
 *
 * <p>Each turn runs every queued command in order, then the {@code tick} with the turn's {@link System#nanoTime()},
 * then refreshes the heartbeat; how long each command waited in the queue (the hand-off from the submitting thread
 * plus the turn it queued behind) goes to {@code queueWait}, since a busy owner shows there first; an idle loop turns every {@code tickInterval}. A command that throws is logged and
 * the loop carries on: one bad message must not kill the owner of all state. Other threads only ask for shutdown
 * ({@link #stop()}); a command submitted after that is refused with an {@link IllegalStateException}.
 *
 * <p>Plain Java on purpose: the services' {@code SmartLifecycle} wrappers call {@link #start()}/{@link #stop()}.
 *
 * @param <S> the state the loop owns; only commands and {@code ask} queries, running on the loop, may touch it
 */
public final class OwnerLoop<S> {

    private static final Logger log = LoggerFactory.getLogger(OwnerLoop.class);

    /** Bounds of a queue-wait histogram: 50 µs (a bare hand-off between threads) to 1 s (an owner stuck in long work). */
    private static final Duration[] QUEUE_WAIT_BUCKETS = java.util.stream.DoubleStream.of(0.00005, 0.0001, 0.00025,
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1)
            .mapToObj(s -> Duration.ofNanos(Math.round(s * 1e9))).toArray(Duration[]::new);

    /** How long {@link #stop()} waits, in seconds, for the owner to finish the command it is running. */
    private static final long STOP_JOIN_SECONDS = 5;

    private final S state;
    private final Duration tickInterval;
    private final Consumer<Thread> onStart;
    private final LongConsumer tick;
    private final LongConsumer queueWait;
    private final BlockingQueue<Queued> commands = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean running;
    private volatile boolean stopRequested;
    private volatile long heartbeatNanos = System.nanoTime();

    /**
     * @param threadName   names the owner thread after its job, e.g. {@code mstar-conductor-lifecycle}
     * @param state        the state the loop owns
     * @param tickInterval how long an idle loop waits for a command: the resolution of the tick and the heartbeat
     * @param onStart      runs first on the owner thread, given that thread (to bind owner checks)
     * @param tick         runs on the owner thread after each turn's commands, given the turn's nanoTime
     */
    public OwnerLoop(String threadName, S state, Duration tickInterval, Consumer<Thread> onStart, LongConsumer tick) {
        this(threadName, state, tickInterval, onStart, tick, nanos -> { });
    }

    /** @param queueWait runs on the owner thread before each command, given the nanoseconds it waited in the queue */
    public OwnerLoop(String threadName, S state, Duration tickInterval, Consumer<Thread> onStart, LongConsumer tick,
            LongConsumer queueWait) {
        this.state = Objects.requireNonNull(state, "state");
        this.tickInterval = Objects.requireNonNull(tickInterval, "tickInterval");
        this.onStart = Objects.requireNonNull(onStart, "onStart");
        this.tick = Objects.requireNonNull(tick, "tick");
        this.queueWait = Objects.requireNonNull(queueWait, "queueWait");
        this.thread = new Thread(this::run, Objects.requireNonNull(threadName, "threadName"));
    }

    /** Queues {@code command} to run on the loop; never blocks. Refused once a stop has been asked for. */
    public void submit(Runnable command) {
        Objects.requireNonNull(command, "command");
        if (stopRequested) {
            throw new IllegalStateException(thread.getName() + " is stopped; command refused");
        }
        commands.add(new Queued(command, System.nanoTime()));
    }

    /**
     * Runs {@code query} on the loop when subscribed and emits its result, or its exception, there; it must not
     * block. Emits an {@link IllegalStateException} if subscribed after a stop has been asked for.
     */
    public <T> Mono<T> ask(Function<S, T> query) {
        Objects.requireNonNull(query, "query");
        return Mono.create(sink -> submit(() -> {
            try {
                sink.success(query.apply(state));
            } catch (RuntimeException e) {
                sink.error(e);
            }
        }));
    }

    /** Histogram bounds for a timer of {@code queueWait}, so every loop's wait reads on the same buckets. */
    public static Duration[] queueWaitBuckets() {
        return QUEUE_WAIT_BUCKETS.clone();
    }

    /** Time since the loop last completed a turn; liveness watches this. */
    public Duration heartbeatAge() {
        return Duration.ofNanos(System.nanoTime() - heartbeatNanos);
    }

    public String threadName() {
        return thread.getName();
    }

    /** Whether the owner thread has been started and has not yet exited. */
    public boolean isRunning() {
        return running;
    }

    public void start() {
        running = true;
        thread.start();
    }

    /**
     * Asks the loop to stop and waits for its thread (at most {@value #STOP_JOIN_SECONDS} seconds): the loop
     * finishes the command it is running and exits. Commands still queued are not run.
     */
    public void stop() {
        stopRequested = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(STOP_JOIN_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs {@code last} on the loop, then {@link #stop()}s: the owner's own shutdown (aborting what is live, freeing
     * what it holds) happens on its thread, after the commands queued before it. Waits for {@code last} at most
     * {@value #STOP_JOIN_SECONDS} seconds; one that fails or overruns is logged and the loop stops anyway. Skipped
     * when the loop is not running.
     */
    public void stop(Consumer<S> last) {
        Objects.requireNonNull(last, "last");
        if (running) {
            try {
                ask(s -> {
                    last.accept(s);
                    return Boolean.TRUE;
                }).block(Duration.ofSeconds(STOP_JOIN_SECONDS));
            } catch (RuntimeException e) {
                log.warn("{}: the last command before stop failed: {}", thread.getName(), e.toString());
            }
        }
        stop();
    }

    private void run() {
        onStart.accept(Thread.currentThread());
        log.info("{} started", thread.getName());
        while (!stopRequested) {
            try {
                Queued command = commands.poll(tickInterval.toNanos(), TimeUnit.NANOSECONDS);
                while (command != null) {
                    queueWait.accept(System.nanoTime() - command.submittedNanos);
                    runSafely(command.command);
                    command = commands.poll();
                }
            } catch (InterruptedException e) {
                if (stopRequested) {
                    break;
                }
                Thread.currentThread().interrupt();
                log.error("{} interrupted without a stop request; exiting", thread.getName());
                break;
            }
            long now = System.nanoTime();
            tick.accept(now);
            heartbeatNanos = now;
        }
        running = false;
        log.info("{} stopped", thread.getName());
    }

    private record Queued(Runnable command, long submittedNanos) {
    }

    private void runSafely(Runnable command) {
        try {
            command.run();
        } catch (RuntimeException e) {
            // One bad message must not kill the owner of all state; the loop carries on.
            log.error("{} command failed", thread.getName(), e);
        }
    }
}
