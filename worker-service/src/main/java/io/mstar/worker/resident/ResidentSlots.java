package io.mstar.worker.resident;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * The slots of a node's resident tables, leased to requests while they hold device pages (docs/resident-planning.md):
 * a request gets one at its first step on the device or after a reload, and gives it back when it is removed, fails
 * or is offloaded. Slot 0 is never leased (the scratch row). Each hand-out has a number of its own, so a planner that
 * sees a slot under a new lease writes its row whole. Owned by the engine loop, with the KV cache.
 */
public final class ResidentSlots {

    /** Slots a node's tables hold at most, whatever its KV pool: the tables are slots x page-table width. */
    public static final int MAX_SLOTS = 512;

    /** A slot and the number of its hand-out. */
    public record Lease(int slot, long number) {
    }

    private final int capacity;
    private final Deque<Integer> free = new ArrayDeque<>();
    private final Map<String, Lease> leases = new HashMap<>();
    private long handedOut;

    public ResidentSlots(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("resident slots: capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        for (int s = capacity; s >= 1; s--) {
            free.push(s); // LIFO from 1: a freed slot is reused first, while its row is warm
        }
    }

    /** The slots a KV pool of {@code maxNumPages} pages can use: one per request holding a page, at most. */
    public static int capacityFor(int maxNumPages) {
        return Math.min(maxNumPages, MAX_SLOTS);
    }

    /** {@code rid}'s lease, handed out now if it has none; null when every slot is leased. */
    public Lease lease(String rid) {
        Lease lease = leases.get(rid);
        if (lease == null && !free.isEmpty()) {
            lease = new Lease(free.pop(), ++handedOut);
            leases.put(rid, lease);
        }
        return lease;
    }

    /** {@code rid} left the device (removed, failed, offloaded): its slot goes back. */
    public void release(String rid) {
        Lease lease = leases.remove(rid);
        if (lease != null) {
            free.push(lease.slot());
        }
    }

    public int capacity() {
        return capacity;
    }

    public int leased() {
        return leases.size();
    }
}
