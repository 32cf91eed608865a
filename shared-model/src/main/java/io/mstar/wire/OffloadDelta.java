package io.mstar.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A rank's offloads and reloads, in the order it made them.
 *
 * <p>Ordered so a follower replays the leader's decisions in the same order: a sequence that
 * worked for the leader works for the followers too. It holds WIRE request ids, not worker-local
 * handles: a handle is minted per worker, so rank 0's would name different requests on a
 * follower. On the wire it is {@code {"rids": [...], "is_offload": [...]}}, two parallel arrays.
 *
 * <p>Not thread-safe: owned by the engine loop that records or replays the moves. The leader's
 * loop journals moves into one delta and hands them to a {@link ScheduleTPNode} with
 * {@link #take()}; each follower replays its own {@link #copy()}. The spec's {@code new()}
 * (a Java keyword) is {@link #newDelta()}; its {@code __len__} and truthiness are
 * {@link #size()} and {@link #isEmpty()}; {@code peek_left}/{@code pop_left} return an empty
 * {@link Optional} where the spec returns None.
 */
public final class OffloadDelta {

    /** One move: {@code offload} true moves the request's state to host memory, false back. */
    public record Move(String rid, boolean offload) {
        public Move {
            Objects.requireNonNull(rid, "rid");
        }
    }

    // Lists, not a deque: removing from the front is O(n), which costs nothing at the handful of
    // entries a delta ever holds, and keeps the two wire arrays trivially parallel.
    private final List<String> rids;
    private final List<Boolean> isOffload;

    private OffloadDelta(List<String> rids, List<Boolean> isOffload) {
        this.rids = rids;
        this.isOffload = isOffload;
    }

    /** An empty delta (the spec's {@code OffloadDelta.new()}). */
    public static OffloadDelta newDelta() {
        return new OffloadDelta(new ArrayList<>(), new ArrayList<>());
    }

    /**
     * A delta holding {@code moves} in order.
     */
    public static OffloadDelta of(List<Move> moves) {
        OffloadDelta d = newDelta();
        for (Move m : moves) {
            d.add(m.rid(), m.offload());
        }
        return d;
    }

    /**
     * A delta from its two wire arrays.
     *
     * @throws IllegalArgumentException when their lengths differ
     */
    public static OffloadDelta fromWire(List<String> rids, List<Boolean> isOffload) {
        if (rids.size() != isOffload.size()) {
            throw new IllegalArgumentException(
                    "rids has " + rids.size() + " entries but is_offload has " + isOffload.size());
        }
        OffloadDelta d = new OffloadDelta(new ArrayList<>(rids.size()), new ArrayList<>(rids.size()));
        for (int i = 0; i < rids.size(); i++) {
            d.add(rids.get(i), isOffload.get(i));
        }
        return d;
    }

    /** Records that {@code rid}'s state was moved to host memory. */
    public void addOffloaded(String rid) {
        add(rid, true);
    }

    /** Records that {@code rid}'s state was moved back to the device. */
    public void addReloaded(String rid) {
        add(rid, false);
    }

    private void add(String rid, Boolean offload) {
        rids.add(Objects.requireNonNull(rid, "rid"));
        isOffload.add(Objects.requireNonNull(offload, "is_offload"));
    }

    /** The oldest move, left in place; empty when there is none. */
    public Optional<Move> peekLeft() {
        return rids.isEmpty() ? Optional.empty() : Optional.of(new Move(rids.get(0), isOffload.get(0)));
    }

    /** Removes and returns the oldest move; empty when there is none. */
    public Optional<Move> popLeft() {
        if (rids.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Move(rids.remove(0), isOffload.remove(0)));
    }

    /**
     * An independent queue holding the same moves: one per follower, each replays at its own
     * pace, popping as it goes.
     */
    public OffloadDelta copy() {
        return new OffloadDelta(new ArrayList<>(rids), new ArrayList<>(isOffload));
    }

    /** Appends {@code other}'s moves after this one's; {@code other} is left unchanged. */
    public void extend(OffloadDelta other) {
        // Snapshot first so that d.extend(d) doubles the moves instead of looping forever.
        List<String> otherRids = new ArrayList<>(other.rids);
        List<Boolean> otherOffload = new ArrayList<>(other.isOffload);
        rids.addAll(otherRids);
        isOffload.addAll(otherOffload);
    }

    /**
     * Hands the queue over and leaves this one empty. Copies and clears rather than rebinding,
     * so a holder of this delta (the engine keeps its journal in a map) sees it emptied.
     */
    public OffloadDelta take() {
        OffloadDelta taken = copy();
        rids.clear();
        isOffload.clear();
        return taken;
    }

    /** The moves, oldest first, as an immutable snapshot. */
    public List<Move> moves() {
        List<Move> out = new ArrayList<>(rids.size());
        for (int i = 0; i < rids.size(); i++) {
            out.add(new Move(rids.get(i), isOffload.get(i)));
        }
        return List.copyOf(out);
    }

    /** The wire {@code rids} array, an immutable snapshot. */
    public List<String> rids() {
        return List.copyOf(rids);
    }

    /** The wire {@code is_offload} array, an immutable snapshot. */
    public List<Boolean> isOffload() {
        return List.copyOf(isOffload);
    }

    /** Moves queued (the spec's {@code __len__}). */
    public int size() {
        return rids.size();
    }

    /** No move queued (an empty delta is falsy in the spec; several callers lean on that). */
    public boolean isEmpty() {
        return rids.isEmpty();
    }

    // package-private, allocation-free access for the codec
    String ridAt(int i) {
        return rids.get(i);
    }

    boolean isOffloadAt(int i) {
        return isOffload.get(i);
    }

    @Override
    public boolean equals(Object o) {
        return this == o || (o instanceof OffloadDelta
                && rids.equals(((OffloadDelta) o).rids) && isOffload.equals(((OffloadDelta) o).isOffload));
    }

    @Override
    public int hashCode() {
        return 31 * rids.hashCode() + isOffload.hashCode();
    }

    @Override
    public String toString() {
        return "OffloadDelta" + moves();
    }
}
