package io.mstar.loop;

/**
 * Checks that state is touched by one thread only (docs/architecture.md#one-owner-thread-per-state: methods that must
 * run on the owner fail loudly elsewhere). Binds to the first thread that calls {@link #check}, so an object may be
 * built on one thread and handed to its owner before first use.
 */
public final class OwnerThread {

    private final String what;
    private volatile Thread owner;

    public OwnerThread(String what) {
        this.what = what;
    }

    public void check() {
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
