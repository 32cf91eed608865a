package io.mstar.tensor;

import java.util.Map;

import io.mstar.tensor.bookkeeping.TensorStoreException;

/**
 * What the owner of a {@link TensorStore} publishes for other threads (metrics, admin): immutable, taken on
 * the owner in one pass.
 *
 * @param liveTensors   tensors held
 * @param owned         of those, in {@link TensorState#OWNED}
 * @param awaitingAck   in {@link TensorState#AWAITING_ACK}
 * @param persisted     in {@link TensorState#PERSISTED}
 * @param bytesByDevice bytes of the buffers held, by device name
 * @param hostCopyBytes bytes of the host copies held
 * @param errors        refusals so far by the store and its bookkeeper together, by reason
 */
public record TensorStoreSnapshot(int liveTensors, long owned, long awaitingAck, long persisted,
                                  Map<String, Long> bytesByDevice, long hostCopyBytes,
                                  Map<TensorStoreException.Reason, Long> errors) {

    public static final TensorStoreSnapshot EMPTY = new TensorStoreSnapshot(0, 0, 0, 0, Map.of(), 0, Map.of());

    public TensorStoreSnapshot {
        bytesByDevice = Map.copyOf(bytesByDevice);
        errors = Map.copyOf(errors);
    }

    public long count(TensorState state) {
        return switch (state) {
            case OWNED -> owned;
            case AWAITING_ACK -> awaitingAck;
            case PERSISTED -> persisted;
        };
    }

    public long error(TensorStoreException.Reason reason) {
        return errors.getOrDefault(reason, 0L);
    }
}
