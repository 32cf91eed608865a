package io.mstar.tensor.bookkeeping;

/**
 * A snapshot of one tensor's reference state. The spec's defaults: a fresh record holds no references, is not
 * persisted and is not registered for remote reads.
 *
 * @param refCnt        references still outstanding; may be negative for a while (an unpersist can arrive
 *                      after the acks it covers)
 * @param persist       held for the conductor, which may still hand the descriptor out
 * @param memRegistered the memory was registered for remote reads, so a teardown must unregister it
 */
public record ReferenceInfo(long refCnt, boolean persist, boolean memRegistered) {

    public static final ReferenceInfo FRESH = new ReferenceInfo(0, false, false);

    /** No references left and not being persisted for the conductor (docs/architecture.md#tensor-lifetime). */
    public boolean collectable() {
        return refCnt <= 0 && !persist;
    }
}
