package io.mstar.graph;

import java.util.Set;

/**
 * {@code next_node} values that name no graph node: the edge leaves the graph instead of feeding
 * a node, so walk validation accepts them where it would reject an unknown node name.
 */
public final class SpecialDestinations {

    /** The edge's tensors go back to the client (text, audio, ...). */
    public static final String EMIT_TO_CLIENT = GraphEdge.EMIT_TO_CLIENT;

    /** Empty {@code next_node}: the edge is only persisted at the conductor, routed nowhere. */
    public static final String PERSIST_ONLY = "";

    private static final Set<String> ALL = Set.of(EMIT_TO_CLIENT, PERSIST_ONLY);

    private SpecialDestinations() {
    }

    /** Whether {@code nextNode} is a special destination rather than a node name. */
    public static boolean isSpecial(String nextNode) {
        return ALL.contains(nextNode);
    }
}
