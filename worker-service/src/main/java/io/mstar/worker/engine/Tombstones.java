package io.mstar.worker.engine;

import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * Ids of requests this worker removed, the oldest forgotten first: a message for one of them is late, not early,
 * so it is dropped rather than parked. Owned by the engine loop.
 */
final class Tombstones {

    private final int capacity;
    private final LinkedHashSet<String> ids = new LinkedHashSet<>();

    Tombstones(int capacity) {
        this.capacity = capacity;
    }

    void add(String requestId) {
        ids.remove(requestId);
        ids.add(requestId);
        if (ids.size() > capacity) {
            Iterator<String> oldest = ids.iterator();
            oldest.next();
            oldest.remove();
        }
    }

    boolean contains(String requestId) {
        return ids.contains(requestId);
    }

    int size() {
        return ids.size();
    }
}
