/**
 * The control-plane protocol: {@link io.mstar.wire.WorkerMessage} and
 * {@link io.mstar.wire.ConductorMessage} envelopes, one record per body named as the reference's
 * {@code mstar.utils.ipc_format} names it (docs/protocol.md), and {@link io.mstar.wire.WireCodec}, their JSON codec.
 *
 * <p>Bodies are immutable values (their collections are unmodifiable, sorted copies) except
 * {@link io.mstar.wire.OffloadDelta}, a small queue owned by one engine loop. Bodies about one
 * request implement {@link io.mstar.wire.RequestScoped}, which the messaging layer uses as the
 * Kafka key. Decoding fails only with {@link io.mstar.wire.WireFormatException}, whose
 * {@link io.mstar.wire.WireFormatException.Reason} is stable.
 */
package io.mstar.wire;
