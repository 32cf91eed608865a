/**
 * Graph primitives shared by conductor and workers: tensor descriptors, routed edges, loop
 * positions (immutable values that travel inside wire bodies), and the static graph model,
 * {@link io.mstar.graph.GraphSection} to {@link io.mstar.graph.ModelGraph}, with the
 * deterministic split into worker graphs ({@link io.mstar.graph.WorkerGraphSplit}). No
 * per-request state lives here.
 */
package io.mstar.graph;
