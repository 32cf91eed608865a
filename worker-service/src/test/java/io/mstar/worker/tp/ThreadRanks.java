package io.mstar.worker.tp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.HostDevice;

/**
 * A tensor-parallel group as threads of this JVM: each rank with a {@link HostDevice} and a
 * {@link SharedMemoryCollective} of its own on one file, as separate workers would have. Made by {@link RankGroups}.
 */
public final class ThreadRanks implements AutoCloseable {

    /** What one rank does once it has joined; its collective is closed afterwards. */
    @FunctionalInterface
    public interface Body<T> {
        T run(SharedMemoryCollective collective, HostDevice device) throws Exception;
    }

    private final Path directory;
    private final Path file;
    private final int size;
    private final Duration timeout;
    private final List<HostDevice> devices = new ArrayList<>();
    private final ExecutorService threads;

    /** @param timeout the collective's bound on every wait for a peer */
    ThreadRanks(Path directory, int size, Duration timeout) {
        this.directory = directory;
        this.file = directory.resolve("mstar-collective.tp-" + size);
        this.size = size;
        this.timeout = timeout;
        for (int r = 0; r < size; r++) {
            devices.add(new HostDevice("host-" + r, 64L << 20));
        }
        this.threads = Executors.newFixedThreadPool(size);
    }

    public List<HostDevice> devices() {
        return devices;
    }

    /** Every rank joins and runs {@code body} on its own thread; each rank's future, in rank order. */
    public <T> List<Future<T>> start(Body<T> body) {
        List<Future<T>> futures = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            futures.add(threads.submit(() -> {
                SharedMemoryCollectiveSettings settings = new SharedMemoryCollectiveSettings(file, rank, size,
                        SharedMemoryCollectiveSettings.DEFAULT_CAPACITY_BYTES / 16, timeout);
                try (SharedMemoryCollective collective = SharedMemoryCollective.join(settings)) {
                    return body.run(collective, devices.get(rank));
                }
            }));
        }
        return futures;
    }

    /** As {@link #start}, waiting for every rank (a bounded wait: a hang fails the test); the first failure thrown. */
    public <T> List<T> run(Body<T> body) throws Exception {
        List<T> results = new ArrayList<>();
        for (Future<T> f : start(body)) {
            results.add(valueOf(f));
        }
        return results;
    }

    public static <T> T valueOf(Future<T> future) throws Exception {
        try {
            return future.get(120, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /** Stops the threads, then checks that every device has no live buffer and the collective's file is gone. */
    @Override
    public void close() throws InterruptedException, IOException {
        threads.shutdownNow();
        threads.awaitTermination(30, TimeUnit.SECONDS);
        for (HostDevice device : devices) {
            assertThat(device.stats().liveBuffers()).as("live buffers of %s", device.name()).isZero();
            device.close();
        }
        try (Stream<Path> files = Files.list(directory)) {
            assertThat(files).as("files left in the collective's directory").isEmpty();
        }
    }
}
