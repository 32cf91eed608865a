package io.mstar.graph;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.deployment.NodeGroupConfig;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits every walk of every model into worker graphs: maximal pieces that run on one node group.
 * Conductor and workers both call this on the same config and graphs and must get the same ids,
 * so the result depends only on the order of {@code models} in the config, the declared order of
 * walks, and graph order within a walk, never on map iteration order.
 *
 * <p>Rules:
 * <ul>
 * <li>A node runs on the one node group of its model that lists it and whose {@code graph_walks}
 *     is empty or names the walk. None is an error naming the node (and, if groups list it but
 *     filter the walk out, those groups); more than one is an error too, since the placement would
 *     be ambiguous. A prefill/decode split therefore lists the node in two groups with disjoint
 *     filters.</li>
 * <li>{@link Sequential}: adjacent pieces on the same group merge into one piece.</li>
 * <li>{@link Parallel}: children that are a single piece merge with the other single-piece
 *     children on the same group (at the first one's position); children split across groups
 *     contribute their pieces unmerged.</li>
 * <li>{@link Loop}: a body on one group stays the same loop; a body split into pieces becomes one
 *     loop per piece with the same name, bounds and outputs.</li>
 * <li>A section wholly on one group is its own single piece, unchanged.</li>
 * <li>Ids count from 0 over models in config order, walks in declared order, pieces in graph order.</li>
 * </ul>
 */
public final class WorkerGraphSplit {

    private WorkerGraphSplit() {
    }

    /** Splits the graphs of every model in {@code config}; {@code graphs} is keyed by model name. */
    public static List<WorkerGraph> split(DeploymentConfig config, Map<String, ModelGraph> graphs) {
        return split(config.models(), graphs);
    }

    /** Splits the graphs of {@code models}, in that order; {@code graphs} is keyed by model name. */
    public static List<WorkerGraph> split(List<ModelConfig> models, Map<String, ModelGraph> graphs) {
        for (String name : graphs.keySet()) {
            if (models.stream().noneMatch(m -> m.name().equals(name))) {
                throw new GraphModelException("model '" + name + "'", "has a graph but is not in the deployment config");
            }
        }
        List<WorkerGraph> result = new ArrayList<>();
        for (ModelConfig model : models) {
            ModelGraph graph = graphs.get(model.name());
            if (graph == null) {
                throw new GraphModelException("model '" + model.name() + "'", "is in the deployment config but has no graph");
            }
            if (!graph.modelName().equals(model.name())) {
                throw new GraphModelException("model '" + model.name() + "'",
                        "graph is keyed under this name but is for model '" + graph.modelName() + "'");
            }
            for (GraphWalk walk : graph.walks()) {
                Placement placement = new Placement(model, walk.name());
                for (Piece piece : split(walk.root(), placement)) {
                    result.add(new WorkerGraph(result.size(), model.name(), walk.name(), piece.group(), piece.section(),
                            List.copyOf(piece.section().nodes().keySet())));
                }
            }
        }
        return List.copyOf(result);
    }

    /** A section placed on one node group. */
    private record Piece(int group, GraphSection section) {
    }

    private static List<Piece> split(GraphSection section, Placement placement) {
        if (section instanceof GraphNode node) {
            return List.of(new Piece(placement.groupOf(node.name()), node));
        }
        if (section instanceof Sequential seq) {
            return splitSequential(seq, placement);
        }
        if (section instanceof Parallel par) {
            return splitParallel(par, placement);
        }
        Loop loop = (Loop) section;
        List<Piece> body = split(loop.section(), placement);
        if (body.size() == 1) {
            return List.of(new Piece(body.get(0).group(), loop));
        }
        return body.stream()
                .map(p -> new Piece(p.group(), new Loop(p.section(), loop.maxIters(), loop.outputs(),
                        loop.accumulatedOutputs(), loop.name())))
                .toList();
    }

    private static List<Piece> splitSequential(Sequential seq, Placement placement) {
        List<Integer> groups = new ArrayList<>();
        List<List<GraphSection>> runs = new ArrayList<>();
        for (GraphSection child : seq.sections()) {
            for (Piece piece : split(child, placement)) {
                int last = groups.size() - 1;
                if (last >= 0 && groups.get(last) == piece.group()) {
                    runs.get(last).add(piece.section());
                } else {
                    groups.add(piece.group());
                    runs.add(new ArrayList<>(List.of(piece.section())));
                }
            }
        }
        if (runs.size() == 1) {
            // Keeps the section itself (not a rebuilt copy) when nothing was split.
            return List.of(new Piece(groups.get(0), seq));
        }
        List<Piece> pieces = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            List<GraphSection> run = runs.get(i);
            pieces.add(new Piece(groups.get(i), run.size() == 1 ? run.get(0) : new Sequential(run)));
        }
        return pieces;
    }

    private static List<Piece> splitParallel(Parallel par, Placement placement) {
        // Slots in graph order; a slot is either a bucket of single-piece children of one group,
        // or one piece of a child that was itself split.
        List<Integer> slotGroups = new ArrayList<>();
        List<List<GraphSection>> slots = new ArrayList<>();
        List<Boolean> isBucket = new ArrayList<>();
        Map<Integer, Integer> bucketByGroup = new LinkedHashMap<>();
        for (GraphSection child : par.sections()) {
            List<Piece> pieces = split(child, placement);
            if (pieces.size() == 1) {
                Piece piece = pieces.get(0);
                Integer slot = bucketByGroup.get(piece.group());
                if (slot != null) {
                    slots.get(slot).add(piece.section());
                    continue;
                }
                bucketByGroup.put(piece.group(), slots.size());
                slotGroups.add(piece.group());
                slots.add(new ArrayList<>(List.of(piece.section())));
                isBucket.add(true);
            } else {
                for (Piece piece : pieces) {
                    slotGroups.add(piece.group());
                    slots.add(new ArrayList<>(List.of(piece.section())));
                    isBucket.add(false);
                }
            }
        }
        if (slots.size() == 1 && isBucket.get(0)) {
            return List.of(new Piece(slotGroups.get(0), par));
        }
        List<Piece> pieces = new ArrayList<>();
        for (int i = 0; i < slots.size(); i++) {
            List<GraphSection> slot = slots.get(i);
            pieces.add(new Piece(slotGroups.get(i), slot.size() == 1 ? slot.get(0) : new Parallel(slot)));
        }
        return pieces;
    }

    /** Where each node of one model's walk runs. */
    private static final class Placement {
        private final ModelConfig model;
        private final String walk;

        Placement(ModelConfig model, String walk) {
            this.model = model;
            this.walk = walk;
        }

        int groupOf(String node) {
            List<Integer> covering = new ArrayList<>();
            List<Integer> filteredOut = new ArrayList<>();
            List<NodeGroupConfig> groups = model.nodeGroups();
            for (int i = 0; i < groups.size(); i++) {
                NodeGroupConfig group = groups.get(i);
                if (!group.nodeNames().contains(node)) {
                    continue;
                }
                if (group.graphWalks().isEmpty() || group.graphWalks().contains(walk)) {
                    covering.add(i);
                } else {
                    filteredOut.add(i);
                }
            }
            String subject = "node '" + node + "'";
            String where = " (model '" + model.name() + "', walk '" + walk + "')";
            if (covering.size() == 1) {
                return covering.get(0);
            }
            if (covering.size() > 1) {
                throw new GraphModelException(subject, "is placed on node groups " + covering + " at once" + where);
            }
            if (!filteredOut.isEmpty()) {
                throw new GraphModelException(subject, "node groups " + filteredOut
                        + " list it but their graph_walks exclude the walk, and no other group covers it" + where);
            }
            throw new GraphModelException(subject, "is in no node group" + where);
        }
    }
}
