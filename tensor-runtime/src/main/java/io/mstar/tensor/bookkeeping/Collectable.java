package io.mstar.tensor.bookkeeping;

import java.util.Arrays;

/**
 * What a batched dereference found collectable: the uuids, in call order, and per uuid whether its memory was
 * registered for remote reads – the one flag a teardown still needs after {@code cleanup} dropped the record.
 * Parallel arrays rather than a list of pairs so the answer crosses without boxing. Owned by the caller.
 */
public record Collectable(long[] uuids, boolean[] registered) {

    public static final Collectable NONE = new Collectable(new long[0], new boolean[0]);

    public Collectable {
        if (uuids.length != registered.length) {
            throw new IllegalArgumentException("uuids and registered differ in length: " + uuids.length + " vs " + registered.length);
        }
    }

    public int size() {
        return uuids.length;
    }

    public boolean isEmpty() {
        return uuids.length == 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Collectable c && Arrays.equals(uuids, c.uuids) && Arrays.equals(registered, c.registered);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(uuids) + Arrays.hashCode(registered);
    }

    @Override
    public String toString() {
        return "Collectable" + Arrays.toString(uuids) + Arrays.toString(registered);
    }

    /** Grows as a batch finds collectable uuids; most batches find none, so nothing is allocated until one. */
    static final class Builder {
        private final int expected;
        private long[] uuids;
        private boolean[] registered;
        private int size;

        Builder() {
            this(8);
        }

        /** @param expected the most it can hold without growing: a batch's length */
        Builder(int expected) {
            this.expected = Math.max(1, expected);
        }

        void add(long uuid, boolean reg) {
            if (uuids == null) {
                uuids = new long[expected];
                registered = new boolean[expected];
            } else if (size == uuids.length) {
                uuids = Arrays.copyOf(uuids, size * 2);
                registered = Arrays.copyOf(registered, size * 2);
            }
            uuids[size] = uuid;
            registered[size] = reg;
            size++;
        }

        Collectable build() {
            if (size == 0) {
                return NONE;
            }
            // A batch that came back whole (the common case: a consumed input batch) hands over its arrays.
            return size == uuids.length ? new Collectable(uuids, registered)
                    : new Collectable(Arrays.copyOf(uuids, size), Arrays.copyOf(registered, size));
        }
    }
}
