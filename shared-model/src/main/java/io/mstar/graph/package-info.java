/**
 * Graph primitives shared by conductor and workers: tensor descriptors, routed edges, loop
 * positions. Immutable values; they travel inside wire bodies.
 */
package io.mstar.graph;
