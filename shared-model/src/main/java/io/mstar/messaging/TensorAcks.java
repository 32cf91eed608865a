package io.mstar.messaging;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import io.mstar.wire.TensorReceived;

/**
 * Acknowledgements a reader owes to producers (docs/architecture.md#tensor-lifetime), collected during one turn of its
 * owner loop and sent as one {@link TensorReceived} per (request, producer) when the turn ends: a turn that read four
 * of a producer's tensors costs the producer, the broker and both inboxes one message instead of four. Nothing waits on
 * an ack but the producer's free, so holding it to the end of the turn delays no output. Not thread-safe: the owner
 * loop that collects the acks also flushes them.
 */
public final class TensorAcks {

    /** Request -> producer -> what is owed, in the order first owed. */
    private final Map<String, Map<EntityId, Owed>> owed = new LinkedHashMap<>();

    private static final class Owed {
        final Map<Long, Integer> landed = new LinkedHashMap<>();
        final List<Long> failed = new ArrayList<>();
    }

    /** One read of {@code uuid} completed (or the edge was skipped unread: the producer's count drops all the same). */
    public void landed(String requestId, EntityId producer, long uuid) {
        owedTo(requestId, producer).landed.merge(uuid, 1, Integer::sum);
    }

    /** One read of {@code uuid} failed. */
    public void failed(String requestId, EntityId producer, long uuid) {
        owedTo(requestId, producer).failed.add(uuid);
    }

    public boolean isEmpty() {
        return owed.isEmpty();
    }

    /** Hands {@code send} one message per (request, producer) owed anything, and starts over. */
    public void flush(BiConsumer<EntityId, TensorReceived> send) {
        List<String> requests = new ArrayList<>(owed.keySet());
        for (String requestId : requests) {
            flush(requestId, send);
        }
    }

    /** Sends what {@code requestId} owes now, ahead of the turn's end (before its teardown, say). */
    public void flush(String requestId, BiConsumer<EntityId, TensorReceived> send) {
        Map<EntityId, Owed> byProducer = owed.remove(requestId);
        if (byProducer == null) {
            return;
        }
        byProducer.forEach((producer, o) -> send.accept(producer, new TensorReceived(requestId, o.landed, o.failed)));
    }

    private Owed owedTo(String requestId, EntityId producer) {
        return owed.computeIfAbsent(requestId, r -> new LinkedHashMap<>()).computeIfAbsent(producer, p -> new Owed());
    }
}
