package io.mstar.tensor.arena;

import java.nio.file.Path;

/** Child process: fills an arena and dies without closing it, as a crashed worker would. */
public final class ArenaLeakMain {

    public static void main(String[] args) {
        ShmArena arena = new ShmArena(new ArenaSettings(Path.of(args[0]), "worker-7", 64 << 10, 1, 256),
                ShmPlacementListener.NONE);
        arena.allocate(1, 1000);
        arena.allocate(2, 128 << 10);
        System.out.println("LEAKED");
        System.out.flush();
        Runtime.getRuntime().halt(0); // no close, no shutdown hooks
    }
}
