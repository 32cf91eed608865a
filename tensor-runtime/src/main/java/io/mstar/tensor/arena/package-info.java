/**
 * The producer's shared-memory arena (docs/architecture.md#data-plane): {@link io.mstar.tensor.arena.ShmArena}
 * places tensors in named, memory-mapped segment files (default {@code /dev/shm}), spills beyond its
 * cap to per-tensor files, reports segments and placements to the bookkeeper
 * ({@link io.mstar.tensor.arena.ShmPlacementListener}), and sweeps files of dead owners at start-up.
 * Consumers on the same host copy out with {@link io.mstar.tensor.arena.ArenaReader} (read-only).
 */
package io.mstar.tensor.arena;
