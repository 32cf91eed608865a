/**
 * Collectives of a tensor-parallel group (docs/tensor-runtime.md#collectives): the
 * {@link io.mstar.tensor.collective.Collective} interface (all-reduce sum, broadcast from rank 0, all-gather, barrier,
 * abort), {@link io.mstar.tensor.collective.SharedMemoryCollective} between host-device workers of one machine (a
 * memory-mapped file, rank-order sums, so every rank gets the same bits) and
 * {@link io.mstar.tensor.collective.NcclCollective} between GPUs. Every wait for a peer is bounded: a dead rank fails
 * its peers' calls with a typed {@link io.mstar.tensor.collective.CollectiveException}, never hangs them.
 */
package io.mstar.tensor.collective;
