package io.mstar.tensor.arena;

import java.nio.ByteBuffer;

/** A byte pattern that depends on the uuid and the position, so a shifted or foreign read shows. */
final class ArenaSlots {

    private ArenaSlots() {
    }

    static byte at(long uuid, long i) {
        return (byte) ((i * 131 + uuid * 7 + (i >>> 11)) & 0xff);
    }

    static void pattern(ArenaSlot slot) {
        ByteBuffer b = slot.buffer();
        for (int i = 0; b.hasRemaining(); i++) {
            b.put(at(slot.uuid(), i));
        }
    }
}
