package io.mstar.wire;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.NestedLoopIndices;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A worker telling the conductor that it emitted an {@code emit_to_client} edge: the conductor
 * reads the tensors the edge describes (tensor transport), streams them to the client and
 * acknowledges each producer with {@code TensorReceived}. One message per emission, so a loop's
 * per-iteration outputs reach the client as they are made.
 *
 * <p>Not in the reference protocol (docs/protocol.md#extensions): the reference system sends this to its
 * API server on a separate socket; here the conductor serves the public API, so it travels on the
 * conductor's topic like every other message it receives (see {@code docs/request-flow.md}).
 *
 * @param requestId   the request
 * @param modality    the edge's output modality (text, image, video, audio)
 * @param graphEdge   the emitted edge, with its descriptors
 * @param loopIndices the loop position that produced it; orders a signal's emissions
 * @param metadata    string-valued extras for the client chunk; default empty
 * @param inlineData  the bytes of each described tensor, base64, in descriptor order; empty (the default) when the
 *                    conductor reads them through the tensor transport. A producer inlines a token-sized output and
 *                    keeps no copy, so the conductor neither reads nor acknowledges it: one read and one ack fewer
 *                    per emission, the bulk of a decode loop's side traffic.
 */
public record ResultTensors(
        String requestId,
        String modality,
        GraphEdge graphEdge,
        NestedLoopIndices loopIndices,
        Map<String, String> metadata,
        List<String> inlineData) implements ConductorMessageBody, RequestScoped {

    public ResultTensors {
        Objects.requireNonNull(requestId, "request_id");
        Objects.requireNonNull(modality, "modality");
        Objects.requireNonNull(graphEdge, "graph_edge");
        Objects.requireNonNull(loopIndices, "loop_indices");
        metadata = Canonical.optionalMap(metadata, "metadata");
        inlineData = Canonical.optionalList(inlineData);
        if (!inlineData.isEmpty() && inlineData.size() != graphEdge.tensorInfo().size()) {
            throw new IllegalArgumentException("inline_data has " + inlineData.size() + " entries for "
                    + graphEdge.tensorInfo().size() + " tensors");
        }
    }

    /** Outputs the conductor reads through the tensor transport. */
    public ResultTensors(String requestId, String modality, GraphEdge graphEdge, NestedLoopIndices loopIndices,
            Map<String, String> metadata) {
        this(requestId, modality, graphEdge, loopIndices, metadata, List.of());
    }

    /** Whether the tensors' bytes travel in this message. */
    public boolean inline() {
        return !inlineData.isEmpty();
    }
}
