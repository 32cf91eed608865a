package io.mstar.wire;

import java.util.List;
import java.util.Objects;

/**
 * A tensor-parallel leader (rank 0) telling its followers to run one batch exactly as it did.
 *
 * <p>The {@code residentDelta} is handed over to this message: the sender must not touch it after
 * building the message (take it from the journal with {@link OffloadDelta#take()}); a follower
 * that replays it at its own pace works on a {@link OffloadDelta#copy()}.
 *
 * @param nodeName       the node to run
 * @param graphWalk      the walk it runs in
 * @param requestIds     the batch, in the leader's order
 * @param speculative    started before the previous batch's outputs were known; default false
 * @param specSeq        sequence number of this batch; default -1
 * @param specFromSeq    the batch this one speculates from; default -1
 * @param residentDelta  offloads and reloads the leader made before this batch, to be applied
 *                       first and in order; default empty
 */
public record ScheduleTPNode(
        String nodeName,
        String graphWalk,
        List<String> requestIds,
        boolean speculative,
        long specSeq,
        long specFromSeq,
        OffloadDelta residentDelta) implements WorkerMessageBody {

    public ScheduleTPNode {
        Objects.requireNonNull(nodeName, "node_name");
        Objects.requireNonNull(graphWalk, "graph_walk");
        requestIds = Canonical.requiredList(requestIds, "request_ids");
        residentDelta = residentDelta == null ? OffloadDelta.newDelta() : residentDelta;
    }

    /** A non-speculative batch with no resident moves. */
    public ScheduleTPNode(String nodeName, String graphWalk, List<String> requestIds, long specSeq) {
        this(nodeName, graphWalk, requestIds, false, specSeq, -1, null);
    }
}
