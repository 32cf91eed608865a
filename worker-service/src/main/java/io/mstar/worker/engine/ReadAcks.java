package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.messaging.EntityId;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.WorkerMessage;

/**
 * Acknowledgements owed to producers (ARCHITECTURE §6): collected as reads land (or edges are skipped unread) and
 * sent as one {@code TensorReceived} per (request, producer) per turn. Only workers are acknowledged: the
 * conductor frees its inputs at {@code RemoveRequest}. Owned by the engine loop.
 */
final class ReadAcks {

    /** Request -> producer entity -> uuid -> reads. */
    private final Map<String, Map<String, Map<Long, Integer>>> landed = new LinkedHashMap<>();
    private final Map<String, Map<String, List<Long>>> failed = new LinkedHashMap<>();

    void landed(String requestId, TensorPointerInfo d) {
        if (EntityId.parse(d.sourceEntity()).isWorker()) {
            landed.computeIfAbsent(requestId, k -> new LinkedHashMap<>())
                    .computeIfAbsent(d.sourceEntity(), k -> new LinkedHashMap<>()).merge(d.uuid(), 1, Integer::sum);
        }
    }

    void failed(String requestId, TensorPointerInfo d) {
        if (EntityId.parse(d.sourceEntity()).isWorker()) {
            failed.computeIfAbsent(requestId, k -> new LinkedHashMap<>())
                    .computeIfAbsent(d.sourceEntity(), k -> new ArrayList<>()).add(d.uuid());
        }
    }

    /** Sends what is owed and starts over. */
    void flush(Outbox outbox) {
        Set<String> ids = new HashSet<>(landed.keySet());
        ids.addAll(failed.keySet());
        for (String id : ids) {
            Map<String, Map<Long, Integer>> byProducer = landed.getOrDefault(id, Map.of());
            Map<String, List<Long>> failedBy = failed.getOrDefault(id, Map.of());
            Set<String> producers = new HashSet<>(byProducer.keySet());
            producers.addAll(failedBy.keySet());
            for (String producer : producers) {
                TensorReceived message = new TensorReceived(id, byProducer.getOrDefault(producer, Map.of()),
                        failedBy.getOrDefault(producer, List.of()));
                outbox.toWorker(EntityId.parse(producer), WorkerMessage.of(message));
            }
        }
        landed.clear();
        failed.clear();
    }
}
