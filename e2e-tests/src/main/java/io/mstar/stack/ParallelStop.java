package io.mstar.stack;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Stops several processes at once: each takes a few seconds to drain on SIGTERM, so one after the other adds up.
 * Shared by {@link LocalStack#close()} and {@code mstar down}.
 */
final class ParallelStop {

    private ParallelStop() {
    }

    /**
     * Runs {@code stop} for every item on its own thread, named {@code threadPrefix} plus the item's name, and
     * waits for all of them.
     *
     * @return what failed, each failure's message starting with its item's name
     */
    static <T> List<StackException> stopEach(List<T> items, String threadPrefix, Function<T, String> name,
            Consumer<T> stop) {
        List<StackException> failures = new CopyOnWriteArrayList<>();
        List<Thread> stoppers = new ArrayList<>();
        for (T item : items) {
            Thread stopper = new Thread(() -> {
                try {
                    stop.accept(item);
                } catch (RuntimeException e) {
                    failures.add(new StackException(name.apply(item) + ": " + e.getMessage(), e));
                }
            }, threadPrefix + name.apply(item));
            stopper.start();
            stoppers.add(stopper);
        }
        for (Thread stopper : stoppers) {
            try {
                stopper.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failures.add(new StackException("interrupted while stopping", e));
            }
        }
        return failures;
    }
}
