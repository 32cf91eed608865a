package io.mstar.worker.engine;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.mstar.wire.WorkerMessage;

/**
 * Messages for a request (or a partition of it) this worker does not know yet: a peer's signals can overtake the
 * conductor's {@code NewRequest} because Kafka orders only one sender's records. Replayed in arrival order after
 * each {@code NewRequest} of the request. Bounded per request. Owned by the engine loop.
 */
final class ParkedMessages {

    private final int maxPerRequest;
    private final Map<String, Deque<WorkerMessage>> parked = new HashMap<>();
    private long dropped;

    ParkedMessages(int maxPerRequest) {
        this.maxPerRequest = maxPerRequest;
    }

    /** Parks {@code message}; answers the oldest one it pushed out, or null. */
    WorkerMessage park(String requestId, WorkerMessage message) {
        Deque<WorkerMessage> queue = parked.computeIfAbsent(requestId, id -> new ArrayDeque<>());
        queue.addLast(message);
        if (queue.size() > maxPerRequest) {
            dropped++;
            return queue.removeFirst();
        }
        return null;
    }

    /** Takes every message parked for {@code requestId}, oldest first. */
    List<WorkerMessage> take(String requestId) {
        Deque<WorkerMessage> queue = parked.remove(requestId);
        return queue == null ? List.of() : List.copyOf(queue);
    }

    int size() {
        return parked.values().stream().mapToInt(Deque::size).sum();
    }

    long dropped() {
        return dropped;
    }
}
