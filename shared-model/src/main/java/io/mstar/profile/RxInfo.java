package io.mstar.profile;

import java.util.Objects;

/**
 * Receive-side transfer totals of one edge between two entities.
 *
 * @param edgeName      the signal received
 * @param sourceEntity  who sent it
 * @param destEntity    who received it
 * @param count         transfers; default 0
 * @param numBytes      bytes moved; default 0
 * @param time          seconds spent; default 0.0
 */
public record RxInfo(String edgeName, String sourceEntity, String destEntity, long count, long numBytes, double time) {

    public RxInfo {
        Objects.requireNonNull(edgeName, "edge_name");
        Objects.requireNonNull(sourceEntity, "source_entity");
        Objects.requireNonNull(destEntity, "dest_entity");
    }
}
