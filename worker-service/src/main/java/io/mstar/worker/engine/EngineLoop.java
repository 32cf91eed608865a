package io.mstar.worker.engine;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.controlplane.InboxLoopLifecycle;
import io.mstar.loop.OwnerLoop;
import io.mstar.loop.OwnerThread;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.Received;
import io.mstar.wire.ConductorHeartbeat;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.SetupDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.wire.WorkerMessageType;
import reactor.core.publisher.Mono;

/**
 * The worker's one owner thread, {@code mstar-worker-<n>-engine-loop} (docs/architecture.md#worker-internals). Every
 * piece of request, graph and tensor state will be owned here; listener threads {@link #deliver} decoded messages and
 * anything else {@link #ask}s through a {@link Mono} run on this thread, or reads what the loop publishes
 * ({@link #heartbeatAge()}). The thread, queue and heartbeat are an {@link OwnerLoop}; this class adds what the worker
 * does on it.
 *
 * <p>It announces the worker with {@code SetupDone} once the inbox is positioned and repeats it every
 * {@code setup-done-interval} (heartbeat, and through the incarnation header a restart announcement). Each received
 * {@link WorkerMessage} is counted per type and handed to the {@link WorkerEngine}; after each turn's messages the
 * engine cuts stream chunks, runs one batch and flushes acks ({@link WorkerEngine#turn}). When more is ready the
 * loop wakes itself instead of waiting for the tick. On stop the engine frees every tensor on this thread.
 */
public final class EngineLoop implements InboxLoopLifecycle {

    private static final Logger log = LoggerFactory.getLogger(EngineLoop.class);

    /** How often the loop wakes when idle: bounds heartbeat jitter and the liveness heartbeat's resolution. */
    private static final Duration TICK = Duration.ofMillis(100);

    /** State the loop owns; only {@link #ask} queries may read it, and every accessor checks that. */
    public static final class State {
        private final Map<WorkerMessageType, Long> handled = new EnumMap<>(WorkerMessageType.class);
        private long setupDonesSent;
        private final OwnerThread owner = new OwnerThread("engine state");
        private WorkerEngine engine;

        /** The engine, for queries that run on the loop. */
        public WorkerEngine engine() {
            checkOwner();
            return engine;
        }

        /** Messages received per type since start. */
        public Map<WorkerMessageType, Long> handled() {
            checkOwner();
            return Map.copyOf(handled);
        }

        public long setupDonesSent() {
            checkOwner();
            return setupDonesSent;
        }

        private void checkOwner() {
            owner.check();
        }
    }

    private final EntityId self;
    private final Duration setupDoneInterval;
    private final Outbox sender;
    private final InboxPosition inbox;
    private final SetupDoneAcks acks;
    private final State state = new State();
    private final OwnerLoop<State> loop;
    private final WorkerEngine engine;
    private final ConductorWatch conductor;
    private long nextSetupDoneNanos;

    /**
     * @param engine builds the engine given the executor that runs commands on this loop (read completions use it)
     */
    public EngineLoop(EntityId self, Duration setupDoneInterval, Outbox sender, InboxPosition inbox,
            SetupDoneAcks acks, Function<java.util.concurrent.Executor, WorkerEngine> engine, EngineMeters meters) {
        this.self = self;
        this.setupDoneInterval = setupDoneInterval;
        this.sender = sender;
        this.inbox = inbox;
        this.acks = acks;
        this.loop = new OwnerLoop<>(threadName(self), state, TICK, owner -> state.checkOwner(), this::tick,
                meters::loopQueueWait);
        this.engine = engine.apply(this::submit);
        state.engine = this.engine;
        // Until the conductor states its heartbeat interval, assume the one workers use for theirs.
        this.conductor = new ConductorWatch(setupDoneInterval);
    }

    private void submit(Runnable command) {
        loop.submit(command);
    }

    /** The engine's published view (any thread). */
    public EngineSnapshot snapshot() {
        return engine.snapshot();
    }

    /** False after a fatal device error (any thread). */
    public boolean deviceHealthy() {
        return engine.deviceHealthy();
    }

    public static String threadName(EntityId self) {
        return "mstar-" + self.value() + "-engine-loop";
    }

    /** Hands a decoded message to the loop; called by the listener thread, never blocks. Refused after stop. */
    public void deliver(Received<WorkerMessage> message) {
        loop.submit(() -> handle(message));
    }

    /** Runs {@code query} on the loop and emits its result there; it must not block. */
    public <T> Mono<T> ask(Function<State, T> query) {
        return loop.ask(query);
    }

    /** Where every request stands, built on the loop ({@link WorkerEngine#describe}). */
    public Mono<EngineDescription> describe() {
        return loop.ask(state -> state.engine().describe());
    }

    /** Time since the loop last completed a turn. */
    public Duration heartbeatAge() {
        return loop.heartbeatAge();
    }

    public String threadName() {
        return loop.threadName();
    }

    /** Runs on the loop after each turn's commands. */
    private void tick(long now) {
        // Announce only once the inbox is positioned: a message sent to us before that could be skipped
        // by the seek to the end, so nobody may address us earlier.
        if (inbox.isPositioned() && now - nextSetupDoneNanos >= 0) {
            sendSetupDone();
            nextSetupDoneNanos = now + setupDoneInterval.toNanos();
        }
        if (conductor.lostAt(now)) {
            int dropped = engine.dropOrphans("the conductor was silent for " + conductor.lossTimeout());
            log.warn("conductor silent for {}: dropped its {} request(s) here", conductor.lossTimeout(), dropped);
        }
        if (engine.turn(now)) {
            loop.submit(() -> { }); // more is ready: turn again without waiting for the tick
        }
    }

    private void sendSetupDone() {
        boolean first = state.setupDonesSent == 0;
        state.setupDonesSent++;
        sender.toConductor(ConductorMessage.of(new SetupDone(self.value()))).whenComplete((metadata, failure) -> {
            if (failure == null) {
                acks.acked();
                if (first) {
                    log.info("SetupDone acknowledged by the broker: {} announced", self);
                }
            } else {
                acks.failed(failure);
                log.warn("SetupDone not acknowledged: {}", failure.toString());
            }
        });
    }

    private void handle(Received<WorkerMessage> received) {
        WorkerMessageType type = received.message().messageType();
        state.handled.merge(type, 1L, Long::sum);
        log.debug("{} from {}", type.value(), received.stamp().sender());
        if (EntityId.CONDUCTOR.equals(received.stamp().sender())
                && conductor.heard(received.stamp().incarnation(), System.nanoTime()) == ConductorWatch.Verdict.RESTARTED) {
            int dropped = engine.dropOrphans("the conductor restarted");
            log.warn("conductor restarted (incarnation {}): dropped the {} request(s) its predecessor drove here",
                    received.stamp().incarnation(), dropped);
        }
        if (received.message().body() instanceof ConductorHeartbeat heartbeat) {
            conductor.expectEvery(Duration.ofMillis(heartbeat.intervalMs()));
            return;
        }
        engine.handle(received.message());
    }

    /** Hands a message to the loop without Kafka headers (in-process drivers and tests); never blocks. */
    public void deliver(WorkerMessage message) {
        loop.submit(() -> {
            state.handled.merge(message.messageType(), 1L, Long::sum);
            if (message.body() instanceof ConductorHeartbeat heartbeat) {
                conductor.expectEvery(Duration.ofMillis(heartbeat.intervalMs()));
                return;
            }
            engine.handle(message);
        });
    }

    @Override
    public void start() {
        // The first SetupDone goes out as soon as the inbox is positioned.
        nextSetupDoneNanos = System.nanoTime();
        loop.start();
    }

    /** Frees the engine's tensors on the loop, then stops it; the data plane is closed by whoever made it. */
    @Override
    public void stop() {
        loop.stop(s -> engine.shutdown());
    }

    @Override
    public boolean isRunning() {
        return loop.isRunning();
    }
}
