package io.mstar.conductor.lifecycle;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Removed requests remembered for status queries and for recognising late messages: the last {@value #CAPACITY}, each
 * as its view at removal and its client stream, which may still be taking the last chunks. Owned by the lifecycle
 * loop, like the {@link RequestLifecycle} that keeps it.
 */
final class RemovedRequests {

    static final int CAPACITY = 10_000;

    private record Tombstone(RequestView removedView, ClientStreamWatch stream) {
        RequestView view() {
            return removedView.withClientStream(stream.snapshot());
        }
    }

    private final LinkedHashMap<String, Tombstone> tombstones = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Tombstone> eldest) {
            return size() > CAPACITY;
        }
    };

    void add(ActiveRequest request) {
        tombstones.put(request.id(), new Tombstone(request.view(), request.clientStream));
    }

    /** Forgets {@code requestId}: a new request took the id. */
    void forget(String requestId) {
        tombstones.remove(requestId);
    }

    boolean contains(String requestId) {
        return tombstones.containsKey(requestId);
    }

    /** The view of a remembered request, or null. */
    RequestView view(String requestId) {
        Tombstone tombstone = tombstones.get(requestId);
        return tombstone == null ? null : tombstone.view();
    }

    /** Every remembered request's view, oldest removal first. */
    List<RequestView> views() {
        return tombstones.values().stream().map(Tombstone::view).toList();
    }
}
