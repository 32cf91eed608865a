package io.mstar.tensor;

import java.util.Locale;

import io.mstar.tensor.bookkeeping.ReferenceInfo;

/**
 * The state a live tensor is reported in (the {@code state} tag of {@code mstar.worker.tensors.live}), derived
 * from its reference state alone so every backend agrees:
 * <ul>
 *   <li>{@link #PERSISTED}: held for the conductor, which may still hand the descriptor out; whatever the count.</li>
 *   <li>{@link #AWAITING_ACK}: registered for remote reads and still referenced – peers have reads or acks
 *       outstanding.</li>
 *   <li>{@link #OWNED}: everything else the store holds: references held only here (a node's inputs, the safety
 *       hold on a fresh output), or no references left and about to be removed, or a record already forgotten by
 *       the bookkeeper whose tensor waits for teardown.</li>
 * </ul>
 * A tensor lingering in OWNED with nothing referencing it is a leak a dashboard can see.
 */
public enum TensorState {
    OWNED,
    AWAITING_ACK,
    PERSISTED;

    /** The tag value; stable. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The state of a tensor with this reference state; {@code null} means the record is already forgotten. */
    public static TensorState of(ReferenceInfo info) {
        if (info == null) {
            return OWNED;
        }
        if (info.persist()) {
            return PERSISTED;
        }
        return info.memRegistered() && info.refCnt() > 0 ? AWAITING_ACK : OWNED;
    }
}
