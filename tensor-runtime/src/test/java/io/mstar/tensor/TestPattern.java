package io.mstar.tensor;

import java.nio.ByteBuffer;

/** A byte pattern that depends on the uuid and the position, so a shifted or foreign read shows. */
public final class TestPattern {

    private TestPattern() {
    }

    public static byte at(long uuid, long i) {
        return (byte) ((i * 131 + uuid * 7 + (i >>> 11)) & 0xff);
    }

    /** Fills {@code b} from its position to its limit with the pattern from index 0. */
    public static void fill(ByteBuffer b, long uuid) {
        ByteBuffer w = b.duplicate();
        for (int i = 0; w.hasRemaining(); i++) {
            w.put(at(uuid, i));
        }
    }

    /** Index of the first byte of {@code b} (position..limit) that is not pattern[from + i], or -1. */
    public static long firstMismatch(ByteBuffer b, long uuid, long from) {
        for (int i = 0; i < b.remaining(); i++) {
            if (b.get(b.position() + i) != at(uuid, from + i)) {
                return i;
            }
        }
        return -1;
    }
}
