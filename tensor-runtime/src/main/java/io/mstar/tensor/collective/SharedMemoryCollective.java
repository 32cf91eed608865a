package io.mstar.tensor.collective;

import io.mstar.tensor.collective.BoundedWait.Outcome;
import io.mstar.tensor.collective.CollectiveException.Reason;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Collectives between {@link HostDevice} workers of one machine, through one memory-mapped file
 * ({@link CollectiveFile}; docs/tensor-runtime.md#collectives). Ranks are processes, or threads in tests, each with
 * its own instance.
 *
 * <p>Every call is one or more rounds; a round moves at most one slot's capacity, so larger calls go in chunks. In
 * round n a rank writes its part into its slot of parity n mod 2, describes the round (operation, call number, bytes)
 * and publishes n; it waits, boundedly, until every rank has published n, checks they describe the same round, and
 * reads the slots. Two slots per rank make a second arrival unnecessary: a rank writes parity n mod 2 again only in
 * round n + 2, which it enters after every peer published n + 1, and a peer publishes n + 1 only after it finished
 * reading round n's slots.
 *
 * <p>An all-reduce sums the slots in rank order 0, 1, …, size - 1 on every rank, the same float additions in the same
 * order, so every rank gets bit-identical sums. Floats are little-endian, as tensors are.
 *
 * <p>A wait that times out, is interrupted, or finds a mismatched round ends the group: the abort word in the file
 * (who, and the reason) makes every rank's waiting call fail at once with that reason, instead of each waiting out its
 * own bound, and every later call with ABORTED. A peer that died shows as TIMEOUT within the bound.
 *
 * <p>{@link #close()} on rank 0 deletes the file; peers' mappings stay valid until dropped. Mappings are released by
 * the garbage collector, as the arena's are (Java 17 has no public unmap, and an explicit one would crash a thread
 * still reading): the file's memory returns once the last rank's collective is collected.
 */
public final class SharedMemoryCollective implements Collective {

    private final SharedMemoryCollectiveSettings settings;
    private final CollectiveFile file;
    private final ByteBuffer map;
    private final int rank;
    private final int size;
    private final int chunk;
    // the owner's (the step thread's)
    private long round;
    private long calls;
    private float[] sum;
    private float[] addend;
    // any thread's
    private volatile boolean closed;
    private volatile Failure failure;
    private volatile Thread waiter;

    private SharedMemoryCollective(SharedMemoryCollectiveSettings settings, CollectiveFile file) {
        this.settings = settings;
        this.file = file;
        this.map = file.map();
        this.rank = settings.rank();
        this.size = settings.size();
        this.chunk = (int) settings.capacityBytes();
    }

    /**
     * Joins the group: rank 0 creates the file, every other rank waits for it; returns once every rank has joined.
     *
     * @throws CollectiveException TIMEOUT when the file or a rank did not come within the timeout; INVALID_ARGUMENT
     *         when the file was made with other settings; IO when it cannot be created or mapped
     */
    public static SharedMemoryCollective join(SharedMemoryCollectiveSettings settings) {
        CollectiveCall call = new CollectiveCall(CollectiveOperation.JOIN, settings.rank(), settings.size(), 0);
        long deadline = System.nanoTime() + settings.timeout().toNanos();
        CollectiveFile file = settings.rank() == 0 ? create(call, settings) : await(call, settings, deadline);
        SharedMemoryCollective collective = new SharedMemoryCollective(settings, file);
        try {
            collective.arrive(call, 0, deadline);
        } catch (CollectiveException e) {
            collective.close();
            throw e;
        }
        return collective;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    public SharedMemoryCollectiveSettings settings() {
        return settings;
    }

    @Override
    public void allReduceSum(DeviceBuffer buffer, long offset, int floats) {
        CollectiveCall call = begin(CollectiveOperation.ALL_REDUCE_SUM);
        long bytes = call.floatBytes(floats);
        ByteBuffer data = hostBytes(call, buffer, offset, bytes, "allReduceSum");
        int at = (int) offset;
        inChunks(call, bytes, (parity, done, n) -> map.put(file.slot(rank, parity), data, at + done, n),
                (parity, done, n) -> sumInRankOrder(parity, data, at + done, n / Float.BYTES));
    }

    @Override
    public void broadcast(DeviceBuffer buffer, long offset, long bytes) {
        CollectiveCall call = begin(CollectiveOperation.BROADCAST);
        ByteBuffer data = hostBytes(call, buffer, offset, bytes, "broadcast");
        int at = (int) offset;
        inChunks(call, bytes, (parity, done, n) -> {
            if (rank == 0) {
                map.put(file.slot(0, parity), data, at + done, n);
            }
        }, (parity, done, n) -> {
            if (rank != 0) {
                data.put(at + done, map, file.slot(0, parity), n);
            }
        });
    }

    @Override
    public void allGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank) {
        CollectiveCall call = begin(CollectiveOperation.ALL_GATHER);
        long total = call.checkGather(in, inOffset, out, outOffset, bytesPerRank);
        ByteBuffer src = hostBytes(call, in, inOffset, bytesPerRank, "allGather in");
        ByteBuffer dst = hostBytes(call, out, outOffset, total, "allGather out");
        int at = (int) inOffset;
        inChunks(call, bytesPerRank, (parity, done, n) -> map.put(file.slot(rank, parity), src, at + done, n),
                (parity, done, n) -> {
                    for (int r = 0; r < size; r++) {
                        dst.put((int) (outOffset + r * bytesPerRank) + done, map, file.slot(r, parity), n);
                    }
                });
    }

    @Override
    public void barrier() {
        CollectiveCall call = begin(CollectiveOperation.BARRIER);
        arrive(call, 0, deadline());
    }

    /** Also marks the file, so that every peer's current and later calls fail with ABORTED at once. */
    @Override
    public void abort() {
        endGroup(Reason.ABORTED, "abort() on rank " + rank);
    }

    /** Fails a call waiting on another thread with CLOSED; rank 0 deletes the file. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
        if (rank == 0) {
            file.delete();
        }
    }

    /** One chunk's work: {@code n} bytes from {@code done} of the call, through the slots of {@code parity}. */
    @FunctionalInterface
    private interface Chunk {
        void run(int parity, int done, int n);
    }

    /**
     * Moves {@code bytes} in rounds of at most one slot (one round when there are none, so that every call is one
     * arrival at least): {@code write} fills this rank's slot, the ranks arrive, {@code read} takes the result.
     */
    private void inChunks(CollectiveCall call, long bytes, Chunk write, Chunk read) {
        int done = 0;
        do {
            int n = (int) Math.min(chunk, bytes - done);
            int parity = nextParity();
            write.run(parity, done, n);
            arrive(call, n, deadline());
            read.run(parity, done, n);
            done += n;
        } while (done < bytes);
    }

    /**
     * Publishes this rank's round (its slot already written) as {@code bytes} of {@code call}, waits until every rank
     * has published it, and checks that all describe the same round.
     */
    private void arrive(CollectiveCall call, int bytes, long deadline) {
        long r = round + 1;
        int parity = (int) (r & 1);
        long descriptor = describe(call, bytes);
        file.describe(rank, parity, descriptor);
        file.publish(rank, r);
        round = r;
        Outcome outcome;
        waiter = Thread.currentThread();
        try {
            outcome = BoundedWait.until(() -> arrived(r), this::stopped, deadline);
        } finally {
            waiter = null;
        }
        switch (outcome) {
            case DONE -> checkSameRound(call, parity, descriptor);
            case STOPPED -> {
                if (closed) {
                    throw call.fail(Reason.CLOSED, "closed while waiting for ranks " + missing(r));
                }
                Failure f = failure();
                throw call.fail(f.reason(), f.because() + " while rank " + rank + " waited for ranks " + missing(r));
            }
            case INTERRUPTED -> {
                String because = "interrupted while waiting for ranks " + missing(r);
                endGroup(Reason.ABORTED, because);
                throw call.fail(Reason.ABORTED, because);
            }
            case TIMED_OUT -> {
                String because = "ranks " + missing(r) + " did not arrive at round " + r + " within "
                        + settings.timeout() + " (" + file.path() + ")";
                endGroup(Reason.TIMEOUT, because);
                throw call.fail(Reason.TIMEOUT, because);
            }
        }
    }

    /** Whether every peer has published round {@code r}; allocates nothing, as it runs in the spin. */
    private boolean arrived(long r) {
        for (int p = 0; p < size; p++) {
            if (p != rank && file.round(p) < r) {
                return false;
            }
        }
        return true;
    }

    /** The peers that have not published round {@code r} yet, for messages. */
    private List<Integer> missing(long r) {
        List<Integer> late = new ArrayList<>();
        for (int p = 0; p < size; p++) {
            if (p != rank && file.round(p) < r) {
                late.add(p);
            }
        }
        return late;
    }

    private void checkSameRound(CollectiveCall call, int parity, long descriptor) {
        for (int p = 0; p < size; p++) {
            long theirs = file.descriptor(p, parity);
            if (p != rank && theirs != descriptor) {
                String why = "ranks disagree on the call: rank " + p + " is in " + describe(theirs) + ", rank " + rank
                        + " in " + describe(descriptor);
                endGroup(Reason.INVALID_ARGUMENT, why);
                throw call.fail(Reason.INVALID_ARGUMENT, why);
            }
        }
    }

    /** A round as one word: the operation, the call number's low 24 bits, the bytes of this round. */
    private static long describe(CollectiveCall call, int bytes) {
        return (long) call.operation().ordinal() << 56 | (call.sequence() & 0xff_ffffL) << 32 | bytes;
    }

    private static String describe(long descriptor) {
        int op = (int) (descriptor >>> 56);
        String name = op < CollectiveOperation.values().length ? CollectiveOperation.values()[op].name() : "op " + op;
        return name + " #" + ((descriptor >>> 32) & 0xff_ffffL) + " (" + (int) descriptor + " bytes)";
    }

    private boolean stopped() {
        return closed || failure != null || file.aborted() != null;
    }

    /** Why the group ended: this rank's own failure, else the first peer's, from the file; null while it stands. */
    private Failure failure() {
        Failure f = failure;
        if (f == null) {
            CollectiveFile.Abort abort = file.aborted();
            if (abort != null) {
                f = new Failure(abort.reason(), "rank " + abort.rank() + " ended the group with " + abort.reason());
                failure = f;
            }
        }
        return f;
    }

    private void endGroup(Reason reason, String because) {
        if (failure == null) {
            failure = new Failure(reason, because);
        }
        file.abort(rank, reason);
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    private CollectiveCall begin(CollectiveOperation operation) {
        CollectiveCall call = new CollectiveCall(operation, rank, size, ++calls);
        if (closed) {
            throw call.fail(Reason.CLOSED, "the collective is closed");
        }
        Failure f = failure();
        if (f != null) {
            throw call.fail(Reason.ABORTED, "the group ended earlier: " + f.reason() + ": " + f.because());
        }
        return call;
    }

    private long deadline() {
        return System.nanoTime() + settings.timeout().toNanos();
    }

    private int nextParity() {
        return (int) ((round + 1) & 1);
    }

    /** {@code floats} at {@code at} of {@code data} become the sum of the ranks' slots, added in rank order. */
    private void sumInRankOrder(int parity, ByteBuffer data, int at, int floats) {
        if (sum == null) {
            sum = new float[chunk / Float.BYTES];
            addend = new float[chunk / Float.BYTES];
        }
        slotFloats(0, parity, floats).get(0, sum, 0, floats);
        for (int r = 1; r < size; r++) {
            slotFloats(r, parity, floats).get(0, addend, 0, floats);
            for (int i = 0; i < floats; i++) {
                sum[i] += addend[i];
            }
        }
        data.slice(at, floats * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().put(0, sum, 0, floats);
    }

    private FloatBuffer slotFloats(int r, int parity, int floats) {
        return map.slice(file.slot(r, parity), floats * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    }

    /** The bytes of a live {@link HostDevice} buffer that holds {@code [offset, offset + bytes)}. */
    private static ByteBuffer hostBytes(CollectiveCall call, DeviceBuffer buffer, long offset, long bytes,
            String what) {
        call.checkRange(buffer, offset, bytes, what);
        if (!(buffer instanceof HostBuffer host) || !(host.device() instanceof HostDevice device)
                || !device.isLive(host)) {
            throw call.fail(Reason.INVALID_ARGUMENT, what + ": not a live HostDevice buffer: " + buffer);
        }
        return host.bytes();
    }

    /** Why the group ended, as the first rank to end it said. */
    private record Failure(Reason reason, String because) {
    }

    private static CollectiveFile create(CollectiveCall call, SharedMemoryCollectiveSettings settings) {
        try {
            return CollectiveFile.create(settings);
        } catch (IOException | UncheckedIOException e) {
            throw call.fail(Reason.IO, "cannot create " + settings.path(), e);
        }
    }

    /** A rank other than 0: looks for rank 0's file until it is there or the deadline passes. */
    private static CollectiveFile await(CollectiveCall call, SharedMemoryCollectiveSettings settings, long deadline) {
        CollectiveFile.Opened[] last = {CollectiveFile.Opened.notYet("not looked")};
        Outcome outcome = BoundedWait.until(() -> {
            try {
                last[0] = CollectiveFile.open(settings);
            } catch (IOException | UncheckedIOException e) {
                throw call.fail(Reason.IO, "cannot open " + settings.path(), e);
            }
            return last[0].settled();
        }, () -> false, deadline);
        return switch (outcome) {
            case DONE -> {
                if (last[0].file() == null) {
                    throw call.fail(Reason.INVALID_ARGUMENT, last[0].problem());
                }
                yield last[0].file();
            }
            case INTERRUPTED -> throw call.fail(Reason.ABORTED, "interrupted while waiting for " + settings.path());
            default -> throw call.fail(Reason.TIMEOUT, "rank 0's file did not come within " + settings.timeout() + ": "
                    + last[0].problem());
        };
    }
}
