package io.mstar.tensor.collective;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;

/**
 * Child process: one rank of a {@link SharedMemoryCollective}. Arguments: file, rank, size, slot capacity, timeout in
 * milliseconds, floats, seed. Prints {@code READY} before it joins and {@code JOINED} after, waits for a line on stdin,
 * all-reduces {@link RankData#floats} of its rank and prints {@code SUM <hash of the result's bits>}; or
 * {@code FAILED <reason>} and exits with 2.
 */
public final class CollectiveRankMain {

    public static void main(String[] args) throws Exception {
        SharedMemoryCollectiveSettings settings = new SharedMemoryCollectiveSettings(Path.of(args[0]),
                Integer.parseInt(args[1]), Integer.parseInt(args[2]), Long.parseLong(args[3]),
                Duration.ofMillis(Long.parseLong(args[4])));
        int floats = Integer.parseInt(args[5]);
        long seed = Long.parseLong(args[6]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("READY");
        try (HostDevice device = new HostDevice();
                SharedMemoryCollective collective = SharedMemoryCollective.join(settings)) {
            System.out.println("JOINED");
            in.readLine();
            HostBuffer buffer = device.allocate(4L * floats);
            RankData.write(buffer, 0, RankData.floats(seed, settings.rank(), floats));
            collective.allReduceSum(buffer, 0, floats);
            System.out.println("SUM " + Arrays.hashCode(RankData.bits(buffer, 0, floats)));
            device.free(buffer);
        } catch (CollectiveException e) {
            System.out.println("FAILED " + e.reason());
            System.exit(2);
        }
    }
}
