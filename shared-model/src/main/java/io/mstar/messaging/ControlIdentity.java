package io.mstar.messaging;

import io.mstar.deployment.ConfigDigest;

/**
 * Who this process is on the control plane: its entity id, the incarnation drawn at start-up and the digest
 * of the deployment config it loaded. Stamped on every record it sends; the digest is also what it demands
 * of every record it receives.
 */
public record ControlIdentity(EntityId self, Incarnation incarnation, ConfigDigest config) {

    /** The headers of a record this process sends at {@code sentAtEpochNanos}. */
    public ControlHeaders.Stamp stamp(long sentAtEpochNanos) {
        return new ControlHeaders.Stamp(self, incarnation, sentAtEpochNanos, config);
    }
}
