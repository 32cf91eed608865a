package io.mstar.stack;

import java.time.Duration;

/** Sleeps between polls; an interrupt ends the wait with a {@link StackException}, interrupt kept. */
final class Pause {

    private Pause() {
    }

    static void of(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StackException("interrupted while waiting", e);
        }
    }
}
