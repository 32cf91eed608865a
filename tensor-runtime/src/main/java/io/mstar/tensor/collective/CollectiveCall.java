package io.mstar.tensor.collective;

import io.mstar.tensor.collective.CollectiveException.Reason;
import io.mstar.tensor.device.DeviceBuffer;

/**
 * One call of a communicator: who and what it is, for its errors, and the range checks both implementations make
 * before anything reaches a peer.
 *
 * @param sequence the call's number on its communicator, from 1; 0 for {@link CollectiveOperation#JOIN}
 */
record CollectiveCall(CollectiveOperation operation, int rank, int size, long sequence) {

    CollectiveException fail(Reason reason, String message) {
        return fail(reason, message, null);
    }

    CollectiveException fail(Reason reason, String message, Throwable cause) {
        return new CollectiveException(reason, operation, rank, size, sequence, message, cause);
    }

    /** {@code [offset, offset + bytes)} lies inside {@code buffer}. */
    void checkRange(DeviceBuffer buffer, long offset, long bytes, String what) {
        if (buffer == null) {
            throw fail(Reason.INVALID_ARGUMENT, what + ": no buffer");
        }
        if (bytes < 0 || offset < 0 || offset > buffer.nbytes() - bytes) {
            throw fail(Reason.INVALID_ARGUMENT, what + ": range [" + offset + ", +" + bytes + ") outside " + buffer
                    + " of " + buffer.nbytes() + " bytes");
        }
    }

    /** The element count of an all-reduce, as bytes. */
    long floatBytes(int floats) {
        if (floats < 0) {
            throw fail(Reason.INVALID_ARGUMENT, "negative float count " + floats);
        }
        return 4L * floats;
    }

    /**
     * Checks an all-gather's ranges and returns the bytes of {@code out} it fills: {@code in} is this rank's own part
     * of {@code out} (in place) or lies apart from all of it, since other ranks' parts are written while {@code in}
     * is still read.
     */
    long checkGather(DeviceBuffer in, long inOffset, DeviceBuffer out, long outOffset, long bytesPerRank) {
        if (bytesPerRank < 0 || bytesPerRank > Long.MAX_VALUE / size) {
            throw fail(Reason.INVALID_ARGUMENT, "bytesPerRank " + bytesPerRank + " out of range");
        }
        long total = bytesPerRank * size;
        checkRange(in, inOffset, bytesPerRank, "allGather in");
        checkRange(out, outOffset, total, "allGather out");
        if (in == out && bytesPerRank > 0) {
            boolean inPlace = inOffset == outOffset + rank * bytesPerRank;
            boolean apart = inOffset + bytesPerRank <= outOffset || outOffset + total <= inOffset;
            if (!inPlace && !apart) {
                throw fail(Reason.INVALID_ARGUMENT, "in [" + inOffset + ", +" + bytesPerRank + ") overlaps out ["
                        + outOffset + ", +" + total + ") but is not this rank's part of it");
            }
        }
        return total;
    }
}
