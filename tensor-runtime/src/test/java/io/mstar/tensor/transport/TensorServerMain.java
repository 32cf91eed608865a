package io.mstar.tensor.transport;

import io.mstar.tensor.TestPattern;
import io.mstar.tensor.arena.ArenaSettings;
import io.mstar.tensor.arena.ArenaSlot;
import io.mstar.tensor.arena.ShmArena;
import io.mstar.tensor.arena.ShmPlacementListener;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child process: a producer with an arena and a tensor server on 127.0.0.1. Commands on stdin, one
 * per line: {@code PUT uuid nbytes} (place, fill with the test pattern, serve), {@code FREE uuid},
 * {@code STATS}, {@code QUIT}. Answers one line each.
 */
public final class TensorServerMain {

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        ServedTensors tensors = new ServedTensors();
        try (ShmArena arena = new ShmArena(new ArenaSettings(dir, "worker-5", 8 << 20, 1, 256),
                ShmPlacementListener.NONE)) {
            try (TensorServer real = TensorServer.start(tensors, "127.0.0.1", 0, "127.0.0.1", 2)) {
                System.out.println("READY " + real.port());
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                for (String line; (line = in.readLine()) != null; ) {
                    String[] cmd = line.split(" ");
                    switch (cmd[0]) {
                        case "PUT" -> {
                            long uuid = Long.parseLong(cmd[1]);
                            ArenaSlot slot = arena.allocate(uuid, Long.parseLong(cmd[2]));
                            TestPattern.fill(slot.buffer(), uuid);
                            tensors.publish(uuid, slot.buffer(), () -> arena.free(slot));
                            System.out.println("PUT " + uuid + " " + slot.fileName() + " " + slot.offset());
                        }
                        case "FREE" -> System.out.println("FREED " + tensors.release(Long.parseLong(cmd[1])));
                        case "STATS" -> System.out.println("STATS " + tensors.live() + " " + tensors.pins() + " "
                                + arena.occupancy().usedBytes());
                        case "QUIT" -> {
                            System.out.println("BYE");
                            return;
                        }
                        default -> System.out.println("ERROR unknown command " + line);
                    }
                    System.out.flush();
                }
            }
        }
    }
}
