package io.mstar.wire;

import io.mstar.graph.NestedLoopIndices;

import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A worker that stopped a disaggregated loop telling the other workers running it. A receiver
 * applies the stop only if it is strictly later ({@link NestedLoopIndices#labelContextGt}) than
 * the last stop it applied to that loop.
 *
 * @param requestId      the request
 * @param loopNames      the loops stopped; a set, sorted on the wire
 * @param partitionName  the partition they run in
 * @param loopStopTimes  loop name to the position at which it stopped; default empty
 */
public record StopLoops(
        String requestId,
        Set<String> loopNames,
        String partitionName,
        Map<String, NestedLoopIndices> loopStopTimes) implements WorkerMessageBody, RequestScoped {

    public StopLoops {
        Objects.requireNonNull(requestId, "request_id");
        loopNames = Canonical.requiredSet(loopNames, "loop_names");
        Objects.requireNonNull(partitionName, "partition_name");
        loopStopTimes = Canonical.optionalMap(loopStopTimes, "loop_stop_times");
    }
}
