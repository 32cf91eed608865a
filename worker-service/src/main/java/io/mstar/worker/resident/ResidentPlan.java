package io.mstar.worker.resident;

import java.util.List;
import java.util.Objects;

import io.mstar.worker.kernel.KvStep;

/**
 * One step on resident tables, as the planner built it on the host: the batch's rows in order (each its request's
 * slot), padded with slot 0 up to the captured size, the {@link ResidentWrites} that bring the tables up to date for
 * it, and, once the replay ran, the token each real row sampled.
 */
public final class ResidentPlan {

    /**
     * One call of the batch.
     *
     * @param rid   the request
     * @param slot  its slot (1..), leased by its KV cache while it holds device pages
     * @param lease the lease's number: a slot handed to another request has another
     * @param kv    its reservation for this step (positions, pages, sampling, seed)
     * @param state the node's loop state the call came with (for toy-tts {@code [token, generated]})
     */
    public record Row(String rid, int slot, long lease, KvStep kv, int[] state) {

        public Row {
            Objects.requireNonNull(rid, "rid");
            if (slot < 1) {
                throw new IllegalArgumentException("request " + rid + " has no resident slot");
            }
        }
    }

    private final String walk;
    private final List<Row> rows;
    private final int padded;
    private final ResidentWrites writes;
    private final boolean[] fresh;
    private int[] sampled;

    ResidentPlan(String walk, List<Row> rows, int padded, ResidentWrites writes, boolean[] fresh) {
        if (padded < rows.size() || rows.isEmpty()) {
            throw new IllegalArgumentException(rows.size() + " rows padded to " + padded);
        }
        this.walk = walk;
        this.rows = List.copyOf(rows);
        this.padded = padded;
        this.writes = writes;
        this.fresh = fresh;
    }

    public String walk() {
        return walk;
    }

    public List<Row> rows() {
        return rows;
    }

    /** Real rows; rows {@code [count, padded)} are padding on slot 0. */
    public int count() {
        return rows.size();
    }

    public int padded() {
        return padded;
    }

    public ResidentWrites writes() {
        return writes;
    }

    /** Whether row {@code i} was written whole this step ({@code resident_row}: new or stale). */
    public boolean fresh(int i) {
        return fresh[i];
    }

    /** The slot of every row, padding included. */
    public int[] slots() {
        int[] slots = new int[padded];
        for (int i = 0; i < rows.size(); i++) {
            slots[i] = rows.get(i).slot();
        }
        return slots;
    }

    /** The token each real row sampled in the replay ({@code < 0}: unusable logits); set once the step ran. */
    public int[] sampled() {
        if (sampled == null) {
            throw new IllegalStateException("the step has not run");
        }
        return sampled.clone();
    }

    public int sampled(int row) {
        if (sampled == null) {
            throw new IllegalStateException("the step has not run");
        }
        return sampled[row];
    }

    void ran(int[] tokens) {
        if (tokens.length != rows.size()) {
            throw new IllegalArgumentException(tokens.length + " tokens for " + rows.size() + " rows");
        }
        this.sampled = tokens.clone();
    }
}
