package io.mstar.controlplane;

import org.springframework.context.SmartLifecycle;

/**
 * The Spring lifecycle of an owner loop that an inbox container ({@link ControlInboxes}) delivers to: the
 * conductor's lifecycle loop and the worker's engine loop.
 */
public interface InboxLoopLifecycle extends SmartLifecycle {

    /**
     * Phase 0: starts before the Kafka listener containers (their default phase is near {@code Integer.MAX_VALUE})
     * and stops after them, so no delivery outlives the loop.
     */
    @Override
    default int getPhase() {
        return 0;
    }
}
