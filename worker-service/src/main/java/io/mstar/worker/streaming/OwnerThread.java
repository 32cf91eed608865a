package io.mstar.worker.streaming;

/**
 * Checks that state is touched by one thread only. Binds to the first thread that calls {@link #check}, so an
 * object may be built on one thread and handed to its owner before first use.
 */
final class OwnerThread {

    private final String what;
    private volatile Thread owner;

    OwnerThread(String what) {
        this.what = what;
    }

    void check() {
        Thread current = Thread.currentThread();
        Thread bound = owner;
        if (bound == null) {
            owner = current;
        } else if (bound != current) {
            throw new IllegalStateException(what + " is owned by thread " + bound.getName()
                    + " but was called from " + current.getName());
        }
    }
}
