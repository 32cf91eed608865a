package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.Received;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.SetupDone;
import reactor.core.publisher.Mono;

/**
 * The conductor's one owner thread, {@code mstar-conductor-lifecycle} (ARCHITECTURE §3.3). It owns all
 * conductor state — for now the {@link WorkerRegistry}; the request lifecycle joins it later — so that state
 * needs no locks. Listener threads {@link #deliver} decoded messages; anything else {@link #ask}s through a
 * {@link Mono} run on this thread, or reads what the loop publishes: the registry {@link #snapshot()} and the
 * {@link #heartbeatAge()} liveness watches.
 *
 * <p>Other threads only ask for shutdown ({@link #stop()}); the loop finishes the command it is running and
 * exits. Request messages other than {@code SetupDone} are logged at debug and dropped until the request
 * lifecycle exists: deliberately, not by oversight.
 */
public final class LifecycleLoop implements SmartLifecycle {

    public static final String THREAD_NAME = "mstar-conductor-lifecycle";

    private static final Logger log = LoggerFactory.getLogger(LifecycleLoop.class);

    /** How often the loop wakes when idle: the resolution of loss detection and of the liveness heartbeat. */
    private static final Duration TICK = Duration.ofMillis(100);

    private final BlockingQueue<Runnable> commands = new LinkedBlockingQueue<>();
    private final WorkerRegistry registry;
    private final Thread thread;
    private volatile boolean running;
    private volatile boolean stopRequested;
    private volatile long heartbeatNanos = System.nanoTime();
    private volatile WorkerRegistry.Snapshot snapshot;

    public LifecycleLoop(WorkerRegistry registry) {
        this.registry = registry;
        this.thread = new Thread(this::run, THREAD_NAME);
        this.snapshot = null;
    }

    /** Hands a decoded message to the loop; called by the listener thread, never blocks. */
    public void deliver(Received<ConductorMessage> message) {
        commands.add(() -> handle(message));
    }

    /** Runs {@code query} on the loop and emits its result there; it must not block. */
    public <T> Mono<T> ask(Function<WorkerRegistry, T> query) {
        return Mono.create(sink -> commands.add(() -> {
            try {
                sink.success(query.apply(registry));
            } catch (RuntimeException e) {
                sink.error(e);
            }
        }));
    }

    /** The registry as last published by the loop; null before the loop's first turn. */
    public WorkerRegistry.Snapshot snapshot() {
        return snapshot;
    }

    /** Time since the loop last completed a turn. */
    public Duration heartbeatAge() {
        return Duration.ofNanos(System.nanoTime() - heartbeatNanos);
    }

    private void run() {
        registry.bindOwner();
        log.info("lifecycle loop started");
        while (!stopRequested) {
            try {
                Runnable command = commands.poll(TICK.toNanos(), TimeUnit.NANOSECONDS);
                while (command != null) {
                    runSafely(command);
                    command = commands.poll();
                }
            } catch (InterruptedException e) {
                if (stopRequested) {
                    break;
                }
                Thread.currentThread().interrupt();
                log.error("lifecycle loop interrupted without a stop request; exiting");
                break;
            }
            long now = System.nanoTime();
            registry.expire(now);
            snapshot = registry.snapshot(now);
            heartbeatNanos = now;
        }
        running = false;
        log.info("lifecycle loop stopped");
    }

    private void runSafely(Runnable command) {
        try {
            command.run();
        } catch (RuntimeException e) {
            // One bad message must not kill the owner of all state; the loop carries on.
            log.error("lifecycle command failed", e);
        }
    }

    private void handle(Received<ConductorMessage> received) {
        ConductorMessage message = received.message();
        ControlHeaders.Stamp stamp = received.stamp();
        if (message.body() instanceof SetupDone setupDone) {
            if (!setupDone.workerId().equals(stamp.sender().value())) {
                log.warn("SetupDone for {} sent by {}; trusting the body", setupDone.workerId(), stamp.sender());
            }
            registry.onSetupDone(setupDone.workerId(), stamp.incarnation(), System.nanoTime());
        } else {
            log.debug("{} from {} not handled yet (the request lifecycle is a later issue)",
                    message.messageType().value(), stamp.sender());
        }
    }

    @Override
    public void start() {
        running = true;
        thread.start();
    }

    @Override
    public void stop() {
        stopRequested = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Starts before the Kafka listener containers and stops after them, so no delivery outlives the loop. */
    @Override
    public int getPhase() {
        return 0;
    }
}
