package io.mstar.tensor.bookkeeping;

import java.util.EnumMap;
import java.util.Map;

/**
 * How many times a bookkeeper refused an operation, by reason. Read by the metrics facade; written only by the
 * bookkeeper's owner thread, so reads from elsewhere are approximate snapshots.
 */
public final class ErrorCounts {

    private static final System.Logger LOG = System.getLogger(ErrorCounts.class.getName());
    private static final TensorStoreException.Reason[] REASONS = TensorStoreException.Reason.values();

    private final long[] counts = new long[REASONS.length];

    public long get(TensorStoreException.Reason reason) {
        return counts[reason.ordinal()];
    }

    public long total() {
        long total = 0;
        for (long c : counts) {
            total += c;
        }
        return total;
    }

    public Map<TensorStoreException.Reason, Long> snapshot() {
        Map<TensorStoreException.Reason, Long> out = new EnumMap<>(TensorStoreException.Reason.class);
        for (TensorStoreException.Reason r : REASONS) {
            out.put(r, counts[r.ordinal()]);
        }
        return out;
    }

    /** Counts the error and returns the exception for the caller to throw (so the throw stays visible there). */
    TensorStoreException raise(TensorStoreException.Reason reason, long uuid, String operation, String message) {
        counts[reason.ordinal()]++;
        TensorStoreException e = new TensorStoreException(reason, uuid, operation, message);
        // DEBUG: the catcher logs with request context; a randomized test provokes these by the thousand.
        LOG.log(System.Logger.Level.DEBUG, e.getMessage());
        return e;
    }

    TensorStoreException unknown(long uuid, String operation) {
        return raise(TensorStoreException.Reason.UNKNOWN_UUID, uuid, operation, "");
    }
}
