/**
 * The data plane (docs/architecture.md#data-plane): the producer's {@link io.mstar.tensor.transport.TensorServer}
 * ({@code GET /tensors/{uuid}}, byte ranges, 404 unknown / 410 freed, reads pin) over a
 * {@link io.mstar.tensor.transport.TensorSource}, fed with staged store tensors by the
 * {@link io.mstar.tensor.transport.TensorPublisher} (also the store's release, so a removal frees the
 * arena slot after the last pinned read), and the consumer's
 * {@link io.mstar.tensor.transport.TensorReader} (arena on this host, HTTP otherwise; reads tracked
 * per request for {@code ReadsDone} and {@code TensorReceived}). Reads are authenticated by
 * {@link io.mstar.tensor.transport.ReadGrants} and, optionally, encrypted with
 * {@link io.mstar.tensor.transport.DataPlaneTls} (docs/security.md).
 */
package io.mstar.tensor.transport;
