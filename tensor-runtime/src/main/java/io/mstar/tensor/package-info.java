/**
 * Tensor lifetime on one entity (docs/architecture.md#tensor-lifetime).
 *
 * <ul>
 *   <li>{@link io.mstar.tensor.TensorStore}: the tensors (device buffers, optional host copies) and the one
 *       request → uuids map, kept only for teardown; reference state is delegated to a
 *       {@link io.mstar.tensor.bookkeeping.TensorBookkeeping}. Owned by the engine loop.</li>
 *   <li>{@link io.mstar.tensor.TensorUuids}: globally unique 64-bit uuids without coordination – entity
 *       ordinal, random incarnation, counter.</li>
 *   <li>{@link io.mstar.tensor.BookkeepingService}: the store as other threads see it – every call on the loop's
 *       executor, answered as a {@code Mono} – and its {@link io.mstar.tensor.TensorMeters}, which read only
 *       published {@link io.mstar.tensor.TensorStoreSnapshot}s and device stats.</li>
 * </ul>
 *
 * Devices are in {@code io.mstar.tensor.device}, reference state in {@code io.mstar.tensor.bookkeeping}, the
 * shared-memory arena and transport in their own packages.
 */
package io.mstar.tensor;
