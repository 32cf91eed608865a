package io.mstar.tensor.arena;

import java.nio.ByteBuffer;
import java.nio.file.Path;

/** Child process: reads one arena range through {@link ArenaReader} and checks the pattern. */
public final class ArenaReadMain {

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        String file = args[1];
        long offset = Long.parseLong(args[2]);
        int nbytes = Integer.parseInt(args[3]);
        long uuid = Long.parseLong(args[4]);
        try (ArenaReader reader = new ArenaReader(dir)) {
            ByteBuffer dst = ByteBuffer.allocateDirect(nbytes);
            reader.read(file, offset, nbytes, dst);
            for (int i = 0; i < nbytes; i++) {
                if (dst.get(i) != ArenaSlots.at(uuid, i)) {
                    System.out.println("MISMATCH at " + i);
                    System.exit(3);
                }
            }
            System.out.println("OK " + nbytes);
        }
    }
}
