package io.mstar.tensor.arena;

import io.mstar.tensor.TestPattern;

/** Fills slots with {@link TestPattern}. */
final class ArenaSlots {

    private ArenaSlots() {
    }

    static byte at(long uuid, long i) {
        return TestPattern.at(uuid, i);
    }

    static void pattern(ArenaSlot slot) {
        TestPattern.fill(slot.buffer(), slot.uuid());
    }
}
