package io.mstar.tensor.collective;

import static org.bytedeco.cuda.global.nccl.ncclCommAbort;
import static org.bytedeco.cuda.global.nccl.ncclCommDestroy;
import static org.bytedeco.cuda.global.nccl.ncclCommGetAsyncError;
import static org.bytedeco.cuda.global.nccl.ncclGetLastError;
import static org.bytedeco.cuda.global.nccl.ncclInProgress;
import static org.bytedeco.cuda.global.nccl.ncclSuccess;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToIntFunction;

import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;

/**
 * One NCCL communicator handle of {@link NcclCollective}. Every call on it takes one lock, so that an abort from
 * another thread never frees the handle under the owner's poll; the owner's polls only try the lock, so an abort
 * under way never holds them up. The handle is released once, by abort or destroy.
 */
final class NcclComm {

    /** What {@link #call} returns once the handle is released (NCCL's results are 0 and up). */
    static final int RELEASED = -1;

    private static final System.Logger LOG = System.getLogger(NcclComm.class.getName());

    private final ncclComm comm;
    private final String name;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean releasing = new AtomicBoolean();
    private boolean released; // guarded by lock

    /** @param name the device and rank, for the log */
    NcclComm(ncclComm comm, String name) {
        this.comm = comm;
        this.name = name;
    }

    /** Runs {@code call} on the handle and returns its result, or {@link #RELEASED}. */
    int call(ToIntFunction<ncclComm> call) {
        lock.lock();
        try {
            return released ? RELEASED : call.applyAsInt(comm);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The asynchronous state: ncclSuccess, ncclInProgress or an error; ncclInProgress while an abort is under way and
     * ncclSuccess once released (the caller's own stopped flag says why it ends).
     */
    int asyncState() {
        if (!lock.tryLock()) {
            return ncclInProgress;
        }
        try {
            if (released) {
                return ncclSuccess;
            }
            int[] state = new int[1];
            int result = ncclCommGetAsyncError(comm, state);
            return result != ncclSuccess ? result : state[0];
        } finally {
            lock.unlock();
        }
    }

    /** NCCL's text for the last error, as {@code " (text)"}, or empty. */
    String lastError() {
        if (!lock.tryLock()) {
            return "";
        }
        try {
            BytePointer text = released ? null : ncclGetLastError(comm);
            String s = text == null ? "" : text.getString();
            return s.isEmpty() ? "" : " (" + s + ")";
        } finally {
            lock.unlock();
        }
    }

    /**
     * Releases the handle once: {@code ncclCommAbort}, which first sets the flags NCCL's kernels poll (so the stream
     * moves again), or {@code ncclCommDestroy} after a clean last call. On a thread of its own, waited for at most
     * {@code bound}: a release that hangs inside NCCL must not hang the rank (the handle is then left to the process's
     * end). Only the first call releases; later ones return at once.
     */
    void release(boolean destroy, Duration bound) {
        if (!releasing.compareAndSet(false, true)) {
            return;
        }
        Thread releaser = new Thread(() -> {
            lock.lock();
            try {
                if (!released) {
                    released = true;
                    int result = destroy ? ncclCommDestroy(comm) : ncclCommAbort(comm);
                    if (result != ncclSuccess && result != ncclInProgress) {
                        LOG.log(System.Logger.Level.WARNING, "{0}: releasing the communicator: {1}", name,
                                NcclLibrary.describe(result));
                    }
                }
            } finally {
                lock.unlock();
            }
        }, "mstar-nccl-release-" + name.replace(':', '-'));
        releaser.setDaemon(true);
        releaser.start();
        try {
            releaser.join(bound.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (releaser.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, "{0}: NCCL did not release the communicator within {1}", name, bound);
        }
    }
}
