package io.mstar.bench.tensor;

import org.openjdk.jmh.infra.Blackhole;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * {@link BookkeepingBenchmark}'s methods timed by the thread's CPU time instead of the wall clock, one backend and
 * resident size per JVM. On the shared 2-core development machine other builds push the load average past 15;
 * JMH's wall-clock figures for two forks then depend on who else ran in which second, while CPU time per
 * operation only carries the (smaller) cache interference. A cross-check for the JMH ratios, not a replacement.
 *
 * <p>Usage: {@code java -cp benchmarks/target/benchmarks.jar io.mstar.bench.tensor.BookkeepingCpuTime
 * plain|fast RESIDENT store|prebuilt|getinfo}. Prints the median and the best of 8 rounds of 0.4 s CPU each,
 * after 4 rounds of warm-up, in CPU nanoseconds per operation (a batch, or one lookup).
 */
public final class BookkeepingCpuTime {

    private BookkeepingCpuTime() {
    }

    public static void main(String[] args) {
        if (args.length != 3) {
            System.err.println("usage: BookkeepingCpuTime plain|fast RESIDENT store|prebuilt|getinfo");
            System.exit(2);
        }
        BookkeepingBenchmark b = new BookkeepingBenchmark();
        b.backend = args[0];
        b.resident = Integer.parseInt(args[1]);
        String what = args[2];
        b.setup();
        Blackhole bh = new Blackhole(
                "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        int perCall = what.equals("getinfo") ? BookkeepingBenchmark.LOOKUPS : 1;
        double[] rounds = new double[12];
        for (int round = 0; round < rounds.length; round++) {
            long t0 = mx.getCurrentThreadCpuTime();
            long stop = t0 + 400_000_000L;
            long calls = 0;
            while (mx.getCurrentThreadCpuTime() < stop) {
                for (int k = 0; k < 200; k++) {
                    switch (what) {
                        case "store" -> bh.consume(b.storeHoldRelease());
                        case "prebuilt" -> bh.consume(b.storeHoldReleasePrebuilt());
                        case "getinfo" -> b.getInfo(bh);
                        default -> throw new IllegalArgumentException(what);
                    }
                }
                calls += 200;
            }
            rounds[round] = (mx.getCurrentThreadCpuTime() - t0) / (double) (calls * perCall);
        }
        double[] measured = Arrays.copyOfRange(rounds, 4, rounds.length);
        Arrays.sort(measured);
        System.out.printf("%s %s resident=%s: %.2f cpu ns/op median, %.2f best%n", what, args[0], args[1],
                (measured[3] + measured[4]) / 2, measured[0]);
    }
}
