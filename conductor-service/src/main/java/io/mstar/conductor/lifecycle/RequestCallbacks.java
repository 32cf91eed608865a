package io.mstar.conductor.lifecycle;

import io.mstar.conductor.error.ErrorType;

/**
 * What the lifecycle's helpers ({@link WalkDriver}, {@link OutputDelivery}) need of the request state machine, which
 * only {@link RequestLifecycle} moves. Called on the lifecycle loop; by then the request may have ended, or gone.
 */
interface RequestCallbacks {

    /** Whether {@code request} is still the live request under its id (not removed, nor replaced). */
    boolean live(ActiveRequest request);

    void fail(ActiveRequest request, ErrorType type, String detail);

    /** A running request whose partitions may all be done and whose outputs may all be delivered. */
    void maybeFinish(ActiveRequest request);

    /** A draining request that may now have nothing left to wait for. */
    void maybeRemove(ActiveRequest request);
}
