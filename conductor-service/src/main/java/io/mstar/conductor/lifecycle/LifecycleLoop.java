package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.conductor.error.ErrorType;
import io.mstar.controlplane.InboxLoopLifecycle;
import io.mstar.loop.OwnerLoop;
import io.mstar.messaging.ControlHeaders;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.Received;
import io.mstar.wire.AbortRequest;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.FailRequests;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.ResultTensors;
import io.mstar.wire.SetupDone;
import io.mstar.wire.WorkerGraphsDone;
import reactor.core.publisher.Mono;

/**
 * The conductor's one owner thread, {@code mstar-conductor-lifecycle} (docs/architecture.md#inside-a-service). It owns
 * all conductor state — the {@link WorkerRegistry} and the {@link RequestLifecycle} — so that state needs no locks.
 * Listener threads {@link #deliver} decoded messages; anything else {@link #ask}s / {@link #askRequests} through a
 * {@link Mono} run on this thread, or reads what the loop publishes: the registry {@link #snapshot()}, the request
 * counts and the {@link #heartbeatAge()} liveness watches. The thread, queue and heartbeat are an {@link OwnerLoop};
 * this class adds what the conductor does on it.
 *
 * <p>Other threads only ask for shutdown ({@link #stop()}); the loop aborts what is live, finishes the command it
 * is running and exits.
 */
public final class LifecycleLoop implements InboxLoopLifecycle {

    public static final String THREAD_NAME = "mstar-conductor-lifecycle";

    private static final Logger log = LoggerFactory.getLogger(LifecycleLoop.class);

    /** How often the loop wakes when idle: the resolution of loss detection, deadlines and drain timeouts. */
    private static final Duration TICK = Duration.ofMillis(100);

    private final WorkerRegistry registry;
    private final RequestLifecycle requests;
    private final OwnerLoop<RequestLifecycle> loop;
    private volatile WorkerRegistry.Snapshot snapshot;

    public LifecycleLoop(WorkerRegistry registry, RequestLifecycle requests, RequestMeters meters) {
        this.registry = registry;
        this.requests = requests;
        this.loop = new OwnerLoop<>(THREAD_NAME, requests, TICK, owner -> {
            registry.bindOwner();
            requests.bindOwner(this::submit, w -> registry.state(w) == WorkerLifecycle.READY);
        }, this::tick, meters::loopQueueWait);
        this.snapshot = null;
    }

    /** Hands a decoded message to the loop; called by the listener thread, never blocks. Refused after stop. */
    public void deliver(Received<ConductorMessage> message) {
        loop.submit(() -> handle(message));
    }

    /** Runs {@code query} against the worker registry on the loop; it must not block. */
    public <T> Mono<T> ask(Function<WorkerRegistry, T> query) {
        return loop.ask(r -> query.apply(registry));
    }

    /** Runs {@code query} against the requests on the loop; it must not block. */
    public <T> Mono<T> askRequests(Function<RequestLifecycle, T> query) {
        return loop.ask(query);
    }

    /** The registry as last published by the loop; null before the loop's first turn. */
    public WorkerRegistry.Snapshot snapshot() {
        return snapshot;
    }

    /** Request counts as last published by the loop. */
    public RequestLifecycle.Published requestCounts() {
        return requests.published();
    }

    /** Time since the loop last completed a turn. */
    public Duration heartbeatAge() {
        return loop.heartbeatAge();
    }

    private void submit(Runnable command) {
        try {
            loop.submit(command);
        } catch (IllegalStateException stopped) {
            log.debug("loop stopped; a late completion is dropped");
        }
    }

    /**
     * Runs on the loop after each turn's commands: loss detection, deadlines, the turn's output acks (after whatever
     * the turn sent, so a transition's signals never queue behind them), then the published snapshot.
     */
    private void tick(long now) {
        for (EntityId lost : registry.expire(now)) {
            requests.onWorkerGone(lost, ErrorType.WORKER_LOST, "was lost (no heartbeat within the loss timeout)");
        }
        requests.tick(now);
        requests.flushAcks();
        snapshot = registry.snapshot(now);
    }

    private void handle(Received<ConductorMessage> received) {
        ConductorMessage message = received.message();
        ControlHeaders.Stamp stamp = received.stamp();
        Object body = message.body();
        if (body instanceof SetupDone setupDone) {
            if (!setupDone.workerId().equals(stamp.sender().value())) {
                log.warn("SetupDone for {} sent by {}; trusting the body", setupDone.workerId(), stamp.sender());
            }
            WorkerEvent event = registry.onSetupDone(setupDone.workerId(), stamp.incarnation(), System.nanoTime());
            if (event == WorkerEvent.RESTARTED) {
                requests.onWorkerGone(EntityId.parse(setupDone.workerId()), ErrorType.WORKER_LOST,
                        "restarted and lost every request it held");
            }
        } else if (body instanceof WorkerGraphsDone done) {
            requests.onWorkerGraphsDone(done, stamp.sender());
        } else if (body instanceof ResultTensors result) {
            requests.onResultTensors(result, stamp.sender());
        } else if (body instanceof ReadsDone done) {
            requests.onReadsDone(done);
        } else if (body instanceof FailRequests failure) {
            requests.onFailRequests(failure, stamp.sender());
        } else if (body instanceof AbortRequest abort) {
            requests.abort(abort.requestId(), AbortReason.MESSAGE);
        } else {
            log.debug("{} from {} is not for the conductor; ignored", message.messageType().value(), stamp.sender());
        }
    }

    @Override
    public void start() {
        loop.start();
    }

    /** Aborts what is live on the loop, then stops it. */
    @Override
    public void stop() {
        loop.stop(RequestLifecycle::shutdown);
    }

    @Override
    public boolean isRunning() {
        return loop.isRunning();
    }
}
