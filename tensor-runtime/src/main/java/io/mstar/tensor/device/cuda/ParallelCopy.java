package io.mstar.tensor.device.cuda;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Host memory copies into and out of pinned staging buffers, split over a few threads: one thread copies
 * about 10-20 GB/s, below what a PCIe 5 link carries, so a single-threaded stage would cap staged transfers.
 * The caller's thread copies one part itself. Created and closed by its {@link CudaDevice}.
 */
final class ParallelCopy implements AutoCloseable {

    /** Parts smaller than this are not worth a hand-off. */
    static final int MIN_PART = 1 << 20;

    private final int threads;
    private final ExecutorService pool;

    ParallelCopy(int threads, String name) {
        this.threads = Math.max(1, threads);
        AtomicInteger n = new AtomicInteger();
        this.pool = this.threads == 1 ? null : Executors.newFixedThreadPool(this.threads - 1, r -> {
            Thread t = new Thread(r, name + "-staging-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Copies {@code src}'s remaining bytes to {@code dst} at its position; neither position moves. */
    void copy(ByteBuffer src, ByteBuffer dst) {
        int len = src.remaining();
        int parts = pool == null ? 1 : Math.max(1, Math.min(threads, len / MIN_PART));
        if (parts == 1) {
            dst.duplicate().put(src.duplicate());
            return;
        }
        int per = (len + parts - 1) / parts;
        List<Future<?>> pending = new ArrayList<>(parts - 1);
        for (int i = 1; i < parts; i++) {
            int off = i * per;
            int n = Math.min(per, len - off);
            ByteBuffer s = src.slice(src.position() + off, n);
            ByteBuffer d = dst.slice(dst.position() + off, n);
            pending.add(pool.submit(() -> d.put(s)));
        }
        dst.slice(dst.position(), per).put(src.slice(src.position(), per));
        for (Future<?> f : pending) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted during a staging copy", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("staging copy failed", e.getCause());
            }
        }
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
