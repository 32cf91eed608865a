package io.mstar.worker.engine;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import io.mstar.messaging.EntityId;
import io.mstar.messaging.RecordKeys;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.WorkerMessage;

/**
 * The control plane of in-process tests, in place of Kafka: every send is recorded, a worker message is handed to
 * the addressed engine loop at once (or held back while {@link #hold} matches, to reorder), a conductor message is
 * queued for the test's conductor. Sends complete at once, as a broker ack would, unless {@link #refuse} matches.
 * With {@link #jitter} on, every worker message arrives after a seeded random delay, in the order Kafka keeps: per
 * sender, addressee and record key.
 */
final class InProcessBroker {

    record Sent(String from, String to, Object message) {
    }

    final List<Sent> sent = Collections.synchronizedList(new ArrayList<>());
    /** Worker messages handed to their worker's loop (queued there), in order. */
    final List<Sent> delivered = Collections.synchronizedList(new ArrayList<>());
    final BlockingQueue<ConductorMessage> conductor = new LinkedBlockingQueue<>();
    private final Map<String, EngineLoop> workers = new ConcurrentHashMap<>();
    private final List<Sent> held = new ArrayList<>();
    private volatile Predicate<Sent> hold = s -> false;
    private volatile Predicate<Sent> refuse = s -> false;
    private volatile UnaryOperator<WorkerMessage> rewrite = UnaryOperator.identity();
    /** Jitter: the random delays, and per (sender, addressee, record key) when its last message is due. */
    private Random delays;
    private long maxDelayNanos;
    private ScheduledExecutorService deliveries;
    private final Map<List<String>, Long> laneDue = new HashMap<>();
    private final Map<List<String>, ArrayDeque<Sent>> lanes = new HashMap<>();

    void register(EntityId worker, EngineLoop loop) {
        workers.put(worker.value(), loop);
    }

    Outbox outboxOf(EntityId from) {
        return new Outbox() {
            @Override
            public CompletableFuture<?> toConductor(ConductorMessage message) {
                Sent s = new Sent(from.value(), EntityId.CONDUCTOR.value(), message);
                if (refuse.test(s)) {
                    return CompletableFuture.failedFuture(new IllegalStateException("refused by the test's broker"));
                }
                sent.add(s);
                conductor.add(message);
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<?> toWorker(EntityId worker, WorkerMessage message) {
                route(new Sent(from.value(), worker.value(), rewrite.apply(message)));
                return CompletableFuture.completedFuture(null);
            }
        };
    }

    /** The conductor's sends go through here too, so they are recorded and can be held. */
    void fromConductor(EntityId worker, WorkerMessage message) {
        route(new Sent(EntityId.CONDUCTOR.value(), worker.value(), message));
    }

    private void route(Sent s) {
        sent.add(s);
        // delivered under the lock (a delivery only queues): a send never overtakes what a release is handing over
        synchronized (held) {
            if (hold.test(s)) {
                held.add(s);
                return;
            }
            deliver(s);
        }
    }

    /** Under the lock: now, or at a random moment no earlier than the last message of its lane. */
    private void deliver(Sent s) {
        if (deliveries == null) {
            EngineLoop loop = workers.get(s.to());
            if (loop != null) {
                loop.deliver((WorkerMessage) s.message());
                delivered.add(s);
            }
            return;
        }
        List<String> lane = List.of(s.from(), s.to(), RecordKeys.of((WorkerMessage) s.message()));
        long now = System.nanoTime();
        long due = Math.max(now + (long) (delays.nextDouble() * maxDelayNanos), laneDue.getOrDefault(lane, now));
        laneDue.put(lane, due);
        lanes.computeIfAbsent(lane, l -> new ArrayDeque<>()).add(s);
        // each delivery hands over its lane's oldest message, whichever fires first: a lane's order holds
        deliveries.schedule(() -> {
            synchronized (held) {
                Sent next = lanes.get(lane).poll();
                EngineLoop loop = workers.get(next.to());
                if (loop != null) {
                    loop.deliver((WorkerMessage) next.message());
                    delivered.add(next);
                }
            }
        }, due - now, TimeUnit.NANOSECONDS);
    }

    /** From now on every worker message waits a random time up to {@code maxDelay} (seeded by {@code random}). */
    void jitter(Random random, Duration maxDelay) {
        synchronized (held) {
            delays = random;
            maxDelayNanos = maxDelay.toNanos();
            deliveries = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "in-process-broker-deliveries");
                t.setDaemon(true);
                return t;
            });
        }
    }

    /** Stops delivering jittered messages (those still due are dropped: the test is over). */
    void close() {
        synchronized (held) {
            if (deliveries != null) {
                deliveries.shutdownNow();
                deliveries = null;
            }
        }
    }

    /** Conductor messages matching {@code predicate} are not delivered and their send fails, as a broker's refusal. */
    void refuse(Predicate<Sent> predicate) {
        refuse = predicate;
    }

    /** Worker messages between workers are replaced by what {@code rewriter} makes of them, as a corrupting broker. */
    void rewrite(UnaryOperator<WorkerMessage> rewriter) {
        rewrite = rewriter;
    }

    void hold(Predicate<Sent> predicate) {
        hold = predicate;
    }

    /** Stops holding and delivers what was held, in order. */
    void release() {
        synchronized (held) {
            hold = s -> false;
            held.forEach(this::deliver);
            held.clear();
        }
    }

    int heldCount() {
        synchronized (held) {
            return held.size();
        }
    }

    /** Worker messages of {@code type} sent to {@code to}. */
    <T> List<T> sentTo(String to, Class<T> type) {
        synchronized (sent) {
            return sent.stream().filter(s -> s.to().equals(to) && s.message() instanceof WorkerMessage m
                    && type.isInstance(m.body())).map(s -> type.cast(((WorkerMessage) s.message()).body())).toList();
        }
    }
}
