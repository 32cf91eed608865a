package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Continuous batching (docs/architecture.md#worker-internals): ready nodes are kept per (model, node, walk); each batch
 * serves the key that was served least recently, with every request ready for it, up to the batch limit. Requests join
 * and leave between batches. Owned by the engine loop.
 */
final class Scheduler {

    /** What one batch runs: one node of one walk of one model. */
    record Key(String model, String node, String walk) {
    }

    private final Map<Key, List<ReadyItem>> ready = new LinkedHashMap<>();
    private final Map<Key, Long> lastServed = new LinkedHashMap<>();
    private long turn;

    void add(ReadyItem item) {
        item.node().queued = true;
        ready.computeIfAbsent(key(item), k -> new ArrayList<>()).add(item);
    }

    /** The next batch, at most {@code limit(key)} items, or an empty list when nothing is ready. */
    List<ReadyItem> next(java.util.function.ToIntFunction<Key> limit) {
        return next(limit, item -> false);
    }

    /** As {@link #next(java.util.function.ToIntFunction)}, leaving out keys whose first item {@code leftOut} names. */
    List<ReadyItem> next(java.util.function.ToIntFunction<Key> limit, Predicate<ReadyItem> leftOut) {
        Key best = null;
        long bestServed = Long.MAX_VALUE;
        for (Map.Entry<Key, List<ReadyItem>> e : ready.entrySet()) {
            long served = lastServed.getOrDefault(e.getKey(), -1L);
            if (!e.getValue().isEmpty() && served < bestServed && !leftOut.test(e.getValue().get(0))) {
                best = e.getKey();
                bestServed = served;
            }
        }
        if (best == null) {
            return List.of();
        }
        List<ReadyItem> items = ready.get(best);
        int n = Math.min(items.size(), Math.max(1, limit.applyAsInt(best)));
        List<ReadyItem> batch = new ArrayList<>(items.subList(0, n));
        items.subList(0, n).clear();
        if (items.isEmpty()) {
            ready.remove(best);
        }
        lastServed.put(best, turn++);
        return batch;
    }

    /** Puts items that waited (for KV pages) back ahead of those of their key that became ready since. */
    void addFirst(List<ReadyItem> items) {
        for (int i = items.size() - 1; i >= 0; i--) {
            ReadyItem item = items.get(i);
            item.node().queued = true;
            ready.computeIfAbsent(key(item), k -> new ArrayList<>()).add(0, item);
        }
    }

    /** Up to {@code n} ready items of {@code key}, oldest first (fresh requests joining a speculated step). */
    List<ReadyItem> take(Key key, int n) {
        List<ReadyItem> items = ready.get(key);
        if (items == null || n <= 0) {
            return List.of();
        }
        int k = Math.min(n, items.size());
        List<ReadyItem> taken = new ArrayList<>(items.subList(0, k));
        items.subList(0, k).clear();
        if (items.isEmpty()) {
            ready.remove(key);
        }
        return taken;
    }

    /** Whether {@code key} has a ready item. */
    boolean hasReady(Key key) {
        List<ReadyItem> items = ready.get(key);
        return items != null && !items.isEmpty();
    }

    /** Whether some key not {@code leftOut} has a ready item. */
    boolean hasWork(Predicate<ReadyItem> leftOut) {
        return ready.values().stream().anyMatch(items -> !items.isEmpty() && !leftOut.test(items.get(0)));
    }

    /**
     * The ready items of {@code key} for exactly {@code requestIds}, in that order, taken out; or null, taking nothing,
     * when one of them is not ready (a tensor-parallel follower's batch is all or nothing).
     */
    List<ReadyItem> takeExactly(Key key, List<String> requestIds) {
        List<ReadyItem> taken = find(key, requestIds);
        if (taken == null) {
            return null;
        }
        List<ReadyItem> items = ready.get(key);
        items.removeAll(taken);
        if (items.isEmpty()) {
            ready.remove(key);
        }
        lastServed.put(key, turn++);
        return taken;
    }

    /** What {@link #takeExactly} would take now, or null; takes nothing. */
    List<ReadyItem> peekExactly(Key key, List<String> requestIds) {
        return find(key, requestIds);
    }

    /** Whether {@link #takeExactly} would take something now; takes nothing. */
    boolean hasExactly(Key key, List<String> requestIds) {
        return find(key, requestIds) != null;
    }

    private List<ReadyItem> find(Key key, List<String> requestIds) {
        List<ReadyItem> items = ready.get(key);
        if (items == null) {
            return null;
        }
        List<ReadyItem> found = new ArrayList<>(requestIds.size());
        for (String id : requestIds) {
            ReadyItem match = items.stream().filter(i -> i.request().requestId.equals(id)).findFirst().orElse(null);
            if (match == null) {
                return null;
            }
            found.add(match);
        }
        return found;
    }

    /** Drops every ready node of {@code requestId} (failed, draining or removed). */
    void removeRequest(String requestId) {
        Iterator<List<ReadyItem>> lists = ready.values().iterator();
        while (lists.hasNext()) {
            List<ReadyItem> items = lists.next();
            items.removeIf(item -> {
                if (item.request().requestId.equals(requestId)) {
                    item.node().queued = false;
                    return true;
                }
                return false;
            });
            if (items.isEmpty()) {
                lists.remove();
            }
        }
    }

    /** Ready nodes waiting per {@code model/node/walk}. */
    Map<String, Integer> readyPerKey() {
        Map<String, Integer> sizes = new LinkedHashMap<>();
        ready.forEach((key, items) -> sizes.put(key.model() + "/" + key.node() + "/" + key.walk(), items.size()));
        return sizes;
    }

    /** Ready nodes waiting, all keys. */
    int queued() {
        return ready.values().stream().mapToInt(List::size).sum();
    }

    /** Distinct requests with a ready node. */
    int queuedRequests() {
        return (int) ready.values().stream().flatMap(List::stream).map(i -> i.request().requestId).distinct().count();
    }

    static Key key(ReadyItem item) {
        return new Key(item.request().model, item.node().node.name(), item.pass().walk);
    }
}
