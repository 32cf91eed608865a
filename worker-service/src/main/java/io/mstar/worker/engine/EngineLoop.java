package io.mstar.worker.engine;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import io.mstar.loop.OwnerLoop;
import io.mstar.messaging.ControlPlaneSender;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.Received;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.SetupDone;
import io.mstar.wire.WorkerMessage;
import io.mstar.wire.WorkerMessageType;
import reactor.core.publisher.Mono;

/**
 * The worker's one owner thread, {@code mstar-worker-<n>-engine-loop} (ARCHITECTURE §9). Every piece of
 * request, graph and tensor state will be owned here; listener threads {@link #deliver} decoded messages and
 * anything else {@link #ask}s through a {@link Mono} run on this thread, or reads what the loop publishes
 * ({@link #heartbeatAge()}). The thread, queue and heartbeat are an {@link OwnerLoop}; this class adds what the
 * worker does on it.
 *
 * <p>What it does today, honestly: it announces the worker with {@code SetupDone} once the inbox is
 * positioned and repeats it every {@code setup-done-interval} (heartbeat, and through the incarnation header a
 * restart announcement). Each received {@link WorkerMessage} is counted per type and logged at debug — and
 * nothing else: request handling (parking, graphs, scheduling, tensors) is a later issue.
 */
public final class EngineLoop implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(EngineLoop.class);

    /** How often the loop wakes when idle: bounds heartbeat jitter and the liveness heartbeat's resolution. */
    private static final Duration TICK = Duration.ofMillis(100);

    /** State the loop owns; only {@link #ask} queries may read it, and every accessor checks that. */
    public static final class State {
        private final Map<WorkerMessageType, Long> handled = new EnumMap<>(WorkerMessageType.class);
        private long setupDonesSent;
        private Thread owner;

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
            if (owner != Thread.currentThread()) {
                throw new IllegalStateException("engine state is owned by "
                        + (owner == null ? "no thread yet" : owner.getName()) + ", not " + Thread.currentThread().getName());
            }
        }
    }

    private final EntityId self;
    private final Duration setupDoneInterval;
    private final ControlPlaneSender sender;
    private final InboxPosition inbox;
    private final SetupDoneAcks acks;
    private final State state = new State();
    private final OwnerLoop<State> loop;
    private long nextSetupDoneNanos;

    public EngineLoop(EntityId self, Duration setupDoneInterval, ControlPlaneSender sender, InboxPosition inbox,
            SetupDoneAcks acks) {
        this.self = self;
        this.setupDoneInterval = setupDoneInterval;
        this.sender = sender;
        this.inbox = inbox;
        this.acks = acks;
        this.loop = new OwnerLoop<>(threadName(self), state, TICK, owner -> state.owner = owner, this::tick);
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
    }

    private void sendSetupDone() {
        boolean first = state.setupDonesSent == 0;
        state.setupDonesSent++;
        sender.sendToConductor(ConductorMessage.of(new SetupDone(self.value()))).whenComplete((metadata, failure) -> {
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
        log.debug("{} from {} received; request handling is not implemented yet", type.value(), received.stamp().sender());
    }

    @Override
    public void start() {
        // The first SetupDone goes out as soon as the inbox is positioned.
        nextSetupDoneNanos = System.nanoTime();
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
