package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import io.mstar.loop.OwnerLoop;
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
 * {@link #heartbeatAge()} liveness watches. The thread, queue and heartbeat are an {@link OwnerLoop}; this class
 * adds what the conductor does on it.
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

    private final WorkerRegistry registry;
    private final OwnerLoop<WorkerRegistry> loop;
    private volatile WorkerRegistry.Snapshot snapshot;

    public LifecycleLoop(WorkerRegistry registry) {
        this.registry = registry;
        this.loop = new OwnerLoop<>(THREAD_NAME, registry, TICK, owner -> registry.bindOwner(), this::tick);
        this.snapshot = null;
    }

    /** Hands a decoded message to the loop; called by the listener thread, never blocks. Refused after stop. */
    public void deliver(Received<ConductorMessage> message) {
        loop.submit(() -> handle(message));
    }

    /** Runs {@code query} on the loop and emits its result there; it must not block. */
    public <T> Mono<T> ask(Function<WorkerRegistry, T> query) {
        return loop.ask(query);
    }

    /** The registry as last published by the loop; null before the loop's first turn. */
    public WorkerRegistry.Snapshot snapshot() {
        return snapshot;
    }

    /** Time since the loop last completed a turn. */
    public Duration heartbeatAge() {
        return loop.heartbeatAge();
    }

    /** Runs on the loop after each turn's commands: loss detection, then the published snapshot. */
    private void tick(long now) {
        registry.expire(now);
        snapshot = registry.snapshot(now);
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
        loop.start();
    }

    @Override
    public void stop() {
        loop.stop();
    }

    @Override
    public boolean isRunning() {
        return loop.isRunning();
    }

    /** Starts before the Kafka listener containers and stops after them, so no delivery outlives the loop. */
    @Override
    public int getPhase() {
        return 0;
    }
}
