package io.mstar.model;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.Loop;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.Parallel;
import io.mstar.graph.Sequential;
import io.mstar.graph.SpecialDestinations;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The built-in test model: integer arithmetic whose every output a test can predict, on a graph
 * that exercises each runtime feature once. All tensors are {@code int32}.
 *
 * <pre>
 * partition default
 *   walk prefill: Sequential[ Parallel[ embed, offset ] (group 0), count (group 1) ]
 *     embed(tokens)    h      = tokens + 1                  -> count
 *     offset(tokens)   base   = [sum(tokens)]               -> count
 *     count(h, base)   state  = [sum(h) + base[0]]          -> persist ("" destination)
 *                      prefill_out = state                  -> emit_to_client (text)
 *   walk decode: Loop decode_loop (max_iters 4) [ step (group 1) ]
 *     step(state)      state' = state + 1                   -> step (loop-back)
 *                      token  = state'                      -> emit_to_client (text, counts as a new token)
 *                      token_stream = state'                -> detok (streaming, partition detok)
 *                      finish signal when state' == stop_at (step_metadata), the data-dependent stop,
 *                      and then also stopped = state'      -> persist (tells the conductor why the loop ended)
 *     loop output      state (last iteration)               -> persist
 * partition detok
 *   walk chunk: detok (group 0), consumes the token_stream buffer in chunks of {@value #CHUNK_SIZE}
 *     detok(chunk)     text   = chunk values * 10           -> emit_to_client (text)
 * </pre>
 *
 * <p>The conductor's policy: prefill, then decode passes while tokens remain; a decode pass runs
 * {@code min(4, max_tokens - tokens so far)} iterations ({@code dynamic_loop_iter_counts}); a pass
 * that persisted {@code stopped} hit {@code stop_at}, which ends the partition. (An iteration count
 * cannot tell: the stop may fall on the pass's last iteration.)
 * With {@code s0 = 2 * sum(tokens) + len(tokens)} a request's outputs are: {@code prefill_out = [s0]},
 * tokens {@code s0+1, s0+2, ...} up to {@code max_tokens} of them or up to and including
 * {@code stop_at}, and the same tokens times ten from {@code detok} in chunks of two, the last
 * chunk possibly shorter.
 */
public final class CounterModel {

    public static final String NAME = "counter";

    public static final String PREFILL = "prefill";
    public static final String DECODE = "decode";
    public static final String CHUNK = "chunk";
    public static final String DETOK_PARTITION = "detok";

    public static final String EMBED = "embed";
    public static final String OFFSET = "offset";
    public static final String COUNT = "count";
    public static final String STEP = "step";
    public static final String DETOK = "detok";

    public static final String TOKENS = "tokens";
    public static final String H = "h";
    public static final String BASE = "base";
    public static final String STATE = "state";
    public static final String PREFILL_OUT = "prefill_out";
    public static final String TOKEN = "token";
    public static final String TOKEN_STREAM = "token_stream";
    /** Persisted by {@code step} only in the iteration that raised the finish signal. */
    public static final String STOPPED = "stopped";
    public static final String TEXT = "text";

    public static final String DECODE_LOOP = "decode_loop";
    /** Iterations of one decode pass at most. */
    public static final int DECODE_MAX_ITERS = 4;
    /** Tokens per chunk of the detok partition's fixed chunk policy. */
    public static final int CHUNK_SIZE = 2;
    /** {@code step_metadata} key: the value at which {@code step} raises its finish signal. */
    public static final String STOP_AT = "stop_at";
    public static final String DTYPE = "int32";
    public static final String MODALITY = "text";

    private CounterModel() {
    }

    public static ModelGraph graph() {
        GraphNode embed = new GraphNode(EMBED, Set.of(TOKENS), List.of(new GraphEdge(COUNT, H, List.of())), false);
        GraphNode offset = new GraphNode(OFFSET, Set.of(TOKENS), List.of(new GraphEdge(COUNT, BASE, List.of())), false);
        GraphNode count = new GraphNode(COUNT, Set.of(H, BASE), List.of(
                GraphEdge.builder(SpecialDestinations.PERSIST_ONLY, STATE).persist(true).build(),
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, PREFILL_OUT).outputModality(MODALITY).build()),
                false);
        GraphWalk prefill = new GraphWalk(PREFILL, new Sequential(List.of(new Parallel(List.of(embed, offset)), count)));

        GraphNode step = new GraphNode(STEP, Set.of(STATE), List.of(
                new GraphEdge(STEP, STATE, List.of()),
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, TOKEN).outputModality(MODALITY)
                        .conductorNewToken(true).build(),
                GraphEdge.builder(DETOK, TOKEN_STREAM).isStreaming(true).targetPartition(DETOK_PARTITION).build(),
                GraphEdge.builder(SpecialDestinations.PERSIST_ONLY, STOPPED).persist(true).build()),
                false);
        Loop decodeLoop = new Loop(step, DECODE_MAX_ITERS,
                List.of(GraphEdge.builder(SpecialDestinations.PERSIST_ONLY, STATE).persist(true).build()),
                List.of(), DECODE_LOOP);
        GraphWalk decode = new GraphWalk(DECODE, decodeLoop);

        GraphNode detok = new GraphNode(DETOK, Set.of(TOKEN_STREAM), List.of(
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, TEXT).outputModality(MODALITY).build()),
                true);
        GraphWalk chunk = new GraphWalk(CHUNK, detok);

        return new ModelGraph(NAME, List.of(prefill, decode, chunk),
                Map.of(ModelGraph.DEFAULT_PARTITION, List.of(PREFILL, DECODE), DETOK_PARTITION, List.of(CHUNK)));
    }
}
