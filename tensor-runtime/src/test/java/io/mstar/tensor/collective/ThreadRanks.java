package io.mstar.tensor.collective;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.mstar.tensor.device.HostDevice;

/**
 * A group of ranks as threads of this JVM, each with a {@link HostDevice} and a {@link SharedMemoryCollective} of its
 * own on one file, as separate worker processes would have.
 */
final class ThreadRanks implements AutoCloseable {

    /** What one rank does once it has joined; its collective is closed afterwards. */
    @FunctionalInterface
    interface Body<T> {
        T run(SharedMemoryCollective collective, HostDevice device) throws Exception;
    }

    private final Path file;
    private final int size;
    private final long capacityBytes;
    private final Duration timeout;
    private final List<HostDevice> devices = new ArrayList<>();
    private final ExecutorService threads;

    ThreadRanks(Path directory, int size, long capacityBytes, Duration timeout) {
        this.file = directory.resolve("mstar-collective.test-" + size);
        this.size = size;
        this.capacityBytes = capacityBytes;
        this.timeout = timeout;
        for (int r = 0; r < size; r++) {
            devices.add(new HostDevice("host-" + r, 64L << 20));
        }
        this.threads = Executors.newFixedThreadPool(size);
    }

    SharedMemoryCollectiveSettings settings(int rank) {
        return new SharedMemoryCollectiveSettings(file, rank, size, capacityBytes, timeout);
    }

    List<HostDevice> devices() {
        return devices;
    }

    /** Every rank joins and runs {@code body} on its own thread; each rank's future, in rank order. */
    <T> List<Future<T>> start(Body<T> body) {
        List<Future<T>> futures = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            futures.add(threads.submit(() -> {
                try (SharedMemoryCollective collective = SharedMemoryCollective.join(settings(rank))) {
                    return body.run(collective, devices.get(rank));
                }
            }));
        }
        return futures;
    }

    /** As {@link #start}, waiting for every rank; the first failure is rethrown. */
    <T> List<T> run(Body<T> body) throws Exception {
        List<T> results = new ArrayList<>();
        for (Future<T> f : start(body)) {
            results.add(valueOf(f));
        }
        return results;
    }

    static <T> T valueOf(Future<T> future) throws Exception {
        try {
            return future.get(120, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    @Override
    public void close() throws InterruptedException {
        threads.shutdownNow();
        threads.awaitTermination(30, TimeUnit.SECONDS);
    }
}
