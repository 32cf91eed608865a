package io.mstar.wire;

import java.util.Objects;

/**
 * The tensor-parallel leader saying it will not continue batch {@code specFromSeq}
 * speculatively. Exactly one of this or a speculative {@link ScheduleTPNode} follows each batch.
 *
 * @param nodeName     the node
 * @param graphWalk    the walk
 * @param specFromSeq  the batch not speculated from
 */
public record TPNoSpeculation(String nodeName, String graphWalk, long specFromSeq) implements WorkerMessageBody {

    public TPNoSpeculation {
        Objects.requireNonNull(nodeName, "node_name");
        Objects.requireNonNull(graphWalk, "graph_walk");
    }
}
