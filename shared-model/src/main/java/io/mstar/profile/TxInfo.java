package io.mstar.profile;

import java.util.Objects;

/**
 * Send-side transfer totals of one edge.
 *
 * @param edgeName      the signal sent
 * @param sourceEntity  who sent it
 * @param count         transfers; default 0
 * @param numBytes      bytes moved; default 0
 * @param time          seconds spent; default 0.0
 */
public record TxInfo(String edgeName, String sourceEntity, long count, long numBytes, double time) {

    public TxInfo {
        Objects.requireNonNull(edgeName, "edge_name");
        Objects.requireNonNull(sourceEntity, "source_entity");
    }
}
