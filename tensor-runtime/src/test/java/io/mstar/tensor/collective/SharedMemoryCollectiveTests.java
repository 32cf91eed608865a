package io.mstar.tensor.collective;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.mstar.tensor.collective.CollectiveException.Reason;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;

/**
 * The shared-memory collective with ranks as threads, each with its own device and collective on one file: results
 * (all-reduce bit-identical on every rank and in rank order), chunking past the slot, a long random run, and the
 * failures (a rank that never comes, abort, close, bad arguments, ranks that disagree). Across processes:
 * {@link SharedMemoryCollectiveCrossProcessTests}.
 */
class SharedMemoryCollectiveTests {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration SHORT = Duration.ofSeconds(1);

    @TempDir
    Path dir;

    private ThreadRanks ranks;

    @AfterEach
    void everyBufferIsFreedAndTheFileGone() throws Exception {
        if (ranks != null) {
            ranks.close();
            for (HostDevice device : ranks.devices()) {
                assertThat(device.stats().liveBuffers()).as("live buffers of %s", device.name()).isZero();
                device.close();
            }
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files).as("files left in the collective's directory").isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void allReduceGivesEveryRankTheSameBitsTheRankOrderSum(int size) throws Exception {
        int n = 2000;
        long seed = 11;
        ranks = new ThreadRanks(dir, size, 1 << 16, LONG);
        List<int[]> results = ranks.run((c, device) -> {
            HostBuffer buffer = device.allocate(8 + 4L * n);
            RankData.write(buffer, 8, RankData.floats(seed, c.rank(), n));
            c.allReduceSum(buffer, 8, n);
            int[] bits = RankData.bits(buffer, 8, n);
            device.free(buffer);
            return bits;
        });
        int[] expected = RankData.bits(RankData.rankOrderSum(seed, size, n));
        for (int r = 0; r < size; r++) {
            assertThat(results.get(r)).as("rank %d", r).isEqualTo(expected);
        }
    }

    @Test
    void theSumIsTakenInRankOrder() throws Exception {
        // (1 + 1e8) - 1e8 is 0 in float; the reverse order, (-1e8 + 1e8) + 1, would be 1
        float[] parts = {1f, 1e8f, -1e8f};
        ranks = new ThreadRanks(dir, 3, 64, LONG);
        List<Float> sums = ranks.run((c, device) -> {
            HostBuffer buffer = device.allocate(4);
            RankData.write(buffer, 0, new float[] {parts[c.rank()]});
            c.allReduceSum(buffer, 0, 1);
            float sum = Float.intBitsToFloat(RankData.bits(buffer, 0, 1)[0]);
            device.free(buffer);
            return sum;
        });
        assertThat(sums).containsOnly(0f);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void broadcastCopiesRankZerosBytesToEveryRank(int size) throws Exception {
        int n = 1001;
        ranks = new ThreadRanks(dir, size, 1 << 16, LONG);
        List<byte[]> results = ranks.run((c, device) -> {
            HostBuffer buffer = device.allocate(3 + n);
            RankData.write(buffer, 3, RankData.bytes(5, c.rank(), n));
            c.broadcast(buffer, 3, n);
            byte[] got = RankData.read(buffer, 3, n);
            device.free(buffer);
            return got;
        });
        for (byte[] got : results) {
            assertThat(got).isEqualTo(RankData.bytes(5, 0, n));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void allGatherPutsRankRsBytesAtItsPartOnEveryRank(int size) throws Exception {
        int per = 333;
        ranks = new ThreadRanks(dir, size, 1 << 16, LONG);
        List<byte[][]> results = ranks.run((c, device) -> {
            HostBuffer in = device.allocate(per + 1);
            HostBuffer out = device.allocate(5L + (long) per * size);
            HostBuffer inPlace = device.allocate((long) per * size);
            byte[] mine = RankData.bytes(9, c.rank(), per);
            RankData.write(in, 1, mine);
            RankData.write(inPlace, (long) per * c.rank(), mine);
            c.allGather(in, 1, out, 5, per);
            c.allGather(inPlace, (long) per * c.rank(), inPlace, 0, per);
            byte[][] got = {RankData.read(out, 5, per * size), RankData.read(inPlace, 0, per * size)};
            device.free(in);
            device.free(out);
            device.free(inPlace);
            return got;
        });
        byte[] expected = new byte[per * size];
        for (int r = 0; r < size; r++) {
            System.arraycopy(RankData.bytes(9, r, per), 0, expected, r * per, per);
        }
        for (byte[][] got : results) {
            assertThat(got[0]).as("into another buffer").isEqualTo(expected);
            assertThat(got[1]).as("in place").isEqualTo(expected);
        }
    }

    @Test
    void barrierReturnsOnlyOnceTheLastRankHasCalledIt() throws Exception {
        ranks = new ThreadRanks(dir, 3, 64, LONG);
        long[] lateArrival = new long[1];
        List<Long> returns = ranks.run((c, device) -> {
            if (c.rank() == 1) {
                Thread.sleep(300);
                lateArrival[0] = System.nanoTime(); // published to the others by the barrier itself
            }
            c.barrier();
            return System.nanoTime();
        });
        assertThat(returns).allSatisfy(t -> assertThat(t).isGreaterThan(lateArrival[0]));
    }

    @Test
    void callsLargerThanTheSlotGoInChunks() throws Exception {
        int floats = 1000; // 4000 bytes through slots of 256: 16 rounds
        int bytes = 1001;
        int per = 700;
        ranks = new ThreadRanks(dir, 3, 256, LONG);
        List<Object[]> results = ranks.run((c, device) -> {
            HostBuffer sum = device.allocate(4L * floats);
            HostBuffer bcast = device.allocate(bytes);
            HostBuffer in = device.allocate(per);
            HostBuffer out = device.allocate(3L * per);
            RankData.write(sum, 0, RankData.floats(3, c.rank(), floats));
            RankData.write(bcast, 0, RankData.bytes(4, c.rank(), bytes));
            RankData.write(in, 0, RankData.bytes(6, c.rank(), per));
            c.allReduceSum(sum, 0, floats);
            c.broadcast(bcast, 0, bytes);
            c.allGather(in, 0, out, 0, per);
            Object[] got = {RankData.bits(sum, 0, floats), RankData.read(bcast, 0, bytes),
                RankData.read(out, 0, 3 * per)};
            for (HostBuffer b : List.of(sum, bcast, in, out)) {
                device.free(b);
            }
            return got;
        });
        for (Object[] got : results) {
            assertThat((int[]) got[0]).isEqualTo(RankData.bits(RankData.rankOrderSum(3, 3, floats)));
            assertThat((byte[]) got[1]).isEqualTo(RankData.bytes(4, 0, bytes));
            assertThat(Arrays.copyOfRange((byte[]) got[2], 2 * per, 3 * per)).isEqualTo(RankData.bytes(6, 2, per));
        }
    }

    @Test
    void aThousandRandomCallsInARowAllCheck() throws Exception {
        long seed = RankOps.seed();
        ranks = new ThreadRanks(dir, 3, 1024, LONG);
        List<Integer> checked = ranks.run((c, device) -> new RankOps(seed, c, device).run(1000));
        assertThat(checked).containsOnly(1000);
    }

    @Test
    void aRankThatNeverArrivesFailsTheOthersWithTimeoutWithinTheBound() throws Exception {
        ranks = new ThreadRanks(dir, 3, 1024, SHORT);
        CountDownLatch othersDone = new CountDownLatch(2);
        List<Future<CollectiveException>> outcomes = ranks.start((c, device) -> {
            if (c.rank() == 2) {
                othersDone.await(60, TimeUnit.SECONDS); // alive, joined, but never makes the call
                return failureOf(c::barrier);
            }
            HostBuffer buffer = device.allocate(400);
            try {
                long start = System.nanoTime();
                CollectiveException e = failureOf(() -> c.allReduceSum(buffer, 0, 100));
                long tookMillis = (System.nanoTime() - start) / 1_000_000;
                assertThat(tookMillis).as("failed within the bound (+5 s)").isLessThan(SHORT.toMillis() + 5_000);
                assertThat(failureOf(c::barrier).reason()).as("a later call").isEqualTo(Reason.ABORTED);
                return e;
            } finally {
                device.free(buffer);
                othersDone.countDown();
            }
        });
        for (int r = 0; r < 2; r++) {
            CollectiveException e = ThreadRanks.valueOf(outcomes.get(r));
            assertThat(e.reason()).isEqualTo(Reason.TIMEOUT);
            assertThat(e.rank()).isEqualTo(r);
            assertThat(e.size()).isEqualTo(3);
            assertThat(e.operation()).isEqualTo(CollectiveOperation.ALL_REDUCE_SUM);
            assertThat(e.sequence()).isEqualTo(1);
            assertThat(e.getMessage()).contains("ranks [2]", "ALL_REDUCE_SUM #1", "rank " + r + " of 3");
        }
        // the late rank finds the group aborted by the ranks that timed out
        assertThat(ThreadRanks.valueOf(outcomes.get(2)).reason()).isEqualTo(Reason.ABORTED);
    }

    @Test
    void joinTimesOutWhenARankOrRankZeroNeverComes() {
        ranks = new ThreadRanks(dir, 2, 64, SHORT);
        assertThat(failureOf(() -> SharedMemoryCollective.join(ranks.settings(0))))
                .satisfies(e -> assertThat(e.operation()).isEqualTo(CollectiveOperation.JOIN))
                .extracting(CollectiveException::reason).isEqualTo(Reason.TIMEOUT);
        assertThat(failureOf(() -> SharedMemoryCollective.join(ranks.settings(1))))
                .satisfies(e -> assertThat(e.getMessage()).contains("rank 0's file"))
                .extracting(CollectiveException::reason).isEqualTo(Reason.TIMEOUT);
    }

    @Test
    void abortFromAnotherThreadFailsTheWaitingRankAtOnceAndItsPeersToo() throws Exception {
        ranks = new ThreadRanks(dir, 2, 64, LONG);
        CountDownLatch aborted = new CountDownLatch(1);
        List<Future<CollectiveException>> outcomes = ranks.start((c, device) -> {
            if (c.rank() == 1) {
                aborted.await(60, TimeUnit.SECONDS);
                return failureOf(c::barrier);
            }
            Thread aborter = after(200, c::abort);
            long start = System.nanoTime();
            CollectiveException e = failureOf(c::barrier);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(LONG.dividedBy(2));
            aborter.join();
            aborted.countDown();
            return e;
        });
        assertThat(ThreadRanks.valueOf(outcomes.get(0)).reason()).isEqualTo(Reason.ABORTED);
        CollectiveException peer = ThreadRanks.valueOf(outcomes.get(1));
        assertThat(peer.reason()).isEqualTo(Reason.ABORTED);
        assertThat(peer.getMessage()).contains("rank 0 ended the group with ABORTED");
    }

    @Test
    void closeFailsAWaitingCallWithClosedAndEveryLaterOne() throws Exception {
        ranks = new ThreadRanks(dir, 2, 64, LONG);
        CountDownLatch closed = new CountDownLatch(1);
        List<Future<CollectiveException>> outcomes = ranks.start((c, device) -> {
            if (c.rank() == 1) {
                closed.await(60, TimeUnit.SECONDS);
                return null;
            }
            Thread closer = after(200, c::close);
            CollectiveException waiting = failureOf(c::barrier);
            closer.join();
            assertThat(failureOf(c::barrier).reason()).isEqualTo(Reason.CLOSED);
            closed.countDown();
            return waiting;
        });
        assertThat(ThreadRanks.valueOf(outcomes.get(0)).reason()).isEqualTo(Reason.CLOSED);
        ThreadRanks.valueOf(outcomes.get(1));
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyPeerIsInvolvedAndLeaveTheCollectiveUsable() throws Exception {
        ranks = new ThreadRanks(dir, 1, 64, LONG);
        ranks.run((c, device) -> {
            HostBuffer buffer = device.allocate(64);
            HostBuffer freed = device.allocate(64);
            device.free(freed);
            List<Runnable> bad = List.of(
                    () -> c.allReduceSum(buffer, -4, 1),
                    () -> c.allReduceSum(buffer, 0, 17),
                    () -> c.allReduceSum(buffer, 4, -1),
                    () -> c.allReduceSum(null, 0, 1),
                    () -> c.allReduceSum(freed, 0, 1),
                    () -> c.broadcast(buffer, 60, 5),
                    () -> c.broadcast(buffer, 0, -1),
                    () -> c.allGather(buffer, 0, buffer, 8, 16),
                    () -> c.allGather(buffer, 0, freed, 0, 16),
                    () -> c.allGather(buffer, 0, buffer, 0, Long.MAX_VALUE));
            for (Runnable call : bad) {
                assertThat(failureOf(call::run).reason()).isEqualTo(Reason.INVALID_ARGUMENT);
            }
            RankData.write(buffer, 0, new float[] {2.5f});
            c.allReduceSum(buffer, 0, 1);
            assertThat(RankData.bits(buffer, 0, 1)).containsExactly(Float.floatToRawIntBits(2.5f));
            device.free(buffer);
            return null;
        });
    }

    @Test
    void ranksThatMakeDifferentCallsBothFailWithInvalidArgument() throws Exception {
        ranks = new ThreadRanks(dir, 2, 64, LONG);
        List<Future<CollectiveException>> outcomes = ranks.start((c, device) -> {
            HostBuffer buffer = device.allocate(40);
            try {
                return c.rank() == 0 ? failureOf(() -> c.allReduceSum(buffer, 0, 10))
                        : failureOf(() -> c.broadcast(buffer, 0, 40));
            } finally {
                device.free(buffer);
            }
        });
        for (Future<CollectiveException> f : outcomes) {
            CollectiveException e = ThreadRanks.valueOf(f);
            assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
            assertThat(e.getMessage())
                    .contains("ranks disagree", "ALL_REDUCE_SUM #1 (40 bytes)", "BROADCAST #1 (40 bytes)");
        }
    }

    @Test
    void settingsAreCheckedWhenMade() {
        Path file = dir.resolve("f");
        assertThatThrownBy(() -> new SharedMemoryCollectiveSettings(file, 2, 2, 64, LONG))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SharedMemoryCollectiveSettings(file, 0, 0, 64, LONG))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SharedMemoryCollectiveSettings(file, 0, 2, 100, LONG))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SharedMemoryCollectiveSettings(file, 0, 2, 1L << 30, LONG))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SharedMemoryCollectiveSettings(file, 0, 2, 64, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(SharedMemoryCollectiveSettings.of("g", 1, 2, LONG).path())
                .isEqualTo(SharedMemoryCollectiveSettings.defaultDirectory().resolve("mstar-collective.g"));
    }

    @Test
    void aRankWithOtherSettingsThanRankZerosIsRefused() throws Exception {
        Path file = dir.resolve("mstar-collective.mismatch");
        ExecutorService leaderThread = Executors.newSingleThreadExecutor();
        try {
            Future<CollectiveException> leader = leaderThread.submit(() -> failureOf(
                    () -> SharedMemoryCollective.join(new SharedMemoryCollectiveSettings(file, 0, 2, 64, SHORT))));
            CollectiveException e = failureOf(
                    () -> SharedMemoryCollective.join(new SharedMemoryCollectiveSettings(file, 1, 2, 128, LONG)));
            assertThat(e.reason()).isEqualTo(Reason.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("slots of 64 bytes", "slots of 128 bytes");
            assertThat(ThreadRanks.valueOf(leader).reason()).isEqualTo(Reason.TIMEOUT);
        } finally {
            leaderThread.shutdownNow();
        }
    }

    /** The exception {@code call} fails with, which must be a {@link CollectiveException}. */
    static CollectiveException failureOf(ThrowingCall call) {
        try {
            call.run();
        } catch (CollectiveException e) {
            return e;
        } catch (Exception e) {
            throw new AssertionError("failed with " + e + ", not a CollectiveException", e);
        }
        throw new AssertionError("the call did not fail");
    }

    @FunctionalInterface
    interface ThrowingCall {
        void run() throws Exception;
    }

    /** Runs {@code action} on a thread of its own, {@code millis} from now. */
    private static Thread after(long millis, Runnable action) {
        Thread thread = new Thread(() -> {
            try {
                Thread.sleep(millis);
                action.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        thread.start();
        return thread;
    }
}
