package io.mstar.graph;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the composite sections ({@link Sequential}, {@link Parallel}) gather from their members in graph order. */
final class Sections {

    private Sections() {
    }

    static Map<String, GraphNode> nodes(List<GraphSection> sections) {
        Map<String, GraphNode> nodes = new LinkedHashMap<>();
        sections.forEach(s -> nodes.putAll(s.nodes()));
        return Collections.unmodifiableMap(nodes);
    }

    static Map<String, Loop> loops(List<GraphSection> sections) {
        Map<String, Loop> loops = new LinkedHashMap<>();
        sections.forEach(s -> loops.putAll(s.loops()));
        return Collections.unmodifiableMap(loops);
    }
}
