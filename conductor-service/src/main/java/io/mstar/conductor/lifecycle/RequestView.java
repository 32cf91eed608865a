package io.mstar.conductor.lifecycle;

import java.time.Instant;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonProperty;

import io.mstar.wire.RequestOutcome;

/**
 * A request as other threads may see it (status and admin listings): a copy made on the loop.
 *
 * @param requestId      the id
 * @param model          the model
 * @param state          lifecycle state
 * @param outcome        how it ended, null while it has not
 * @param errorType      the error type of a failed or aborted request, null otherwise
 * @param abortReason    why it was aborted, null unless aborted
 * @param detail         the error detail, null unless failed or aborted
 * @param submittedAt    when it was submitted
 * @param tokensProduced tokens produced per partition
 * @param chunksDelivered output chunks delivered to the client
 * @param partitions      where each partition stands: what a request that does not move waits for
 * @param readsInFlight   reads of its outputs started and not finished
 * @param outputsWaiting  per output signal, outputs received and not yet delivered (read, or waiting for an earlier
 *                        one of its loop order)
 * @param clientStream    what the client's response did with the chunks delivered (and the terminal one)
 */
public record RequestView(@JsonProperty("request_id") String requestId, @JsonProperty("model") String model,
        @JsonProperty("state") RequestState state, @JsonProperty("outcome") RequestOutcome outcome,
        @JsonProperty("error_type") String errorType, @JsonProperty("abort_reason") String abortReason,
        @JsonProperty("detail") String detail, @JsonProperty("submitted_at") Instant submittedAt,
        @JsonProperty("tokens_produced") Map<String, Integer> tokensProduced,
        @JsonProperty("chunks_delivered") int chunksDelivered,
        @JsonProperty("partitions") Map<String, PartitionProgress> partitions,
        @JsonProperty("reads_in_flight") int readsInFlight,
        @JsonProperty("outputs_waiting") Map<String, Integer> outputsWaiting,
        @JsonProperty("client_stream") ClientStream clientStream) {

    /** The same view with {@code stream} as its client stream (a removed request's stream may still move). */
    RequestView withClientStream(ClientStream stream) {
        return new RequestView(requestId, model, state, outcome, errorType, abortReason, detail, submittedAt,
                tokensProduced, chunksDelivered, partitions, readsInFlight, outputsWaiting, stream);
    }

    /**
     * The client's side of the chunk stream: whether its response subscribed, how many chunks it asked for (-1:
     * without bound) and took, whether it received the end, and whether it cancelled (a client that went away).
     * {@code taken} below {@code chunks_delivered} plus the terminal chunk, with {@code requested} equal to
     * {@code taken}, is a response that stopped asking: the client is not reading. A client that goes away cancels
     * first and aborts its request; when the request's end is emitted before the cancel reaches this point, both
     * {@code completed} and {@code cancelled} are set.
     */
    public record ClientStream(@JsonProperty("subscribed") boolean subscribed,
            @JsonProperty("requested") long requested, @JsonProperty("taken") long taken,
            @JsonProperty("completed") boolean completed, @JsonProperty("cancelled") boolean cancelled) {
    }

    /**
     * A partition's walk and pass now, whether it is done, and how many of the pass's worker graphs reported (a pass
     * ends when all have).
     */
    public record PartitionProgress(@JsonProperty("walk") String walk, @JsonProperty("pass") int pass,
            @JsonProperty("done") boolean done, @JsonProperty("reports") int reports) {
    }
}
