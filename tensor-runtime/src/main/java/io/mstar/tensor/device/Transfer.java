package io.mstar.tensor.device;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * One copy of a batch ({@link Device#copyToHost(java.util.List)}, {@link Device#copyFromHost(java.util.List)}):
 * {@code host.remaining()} bytes between {@code host} and {@code buffer} at {@code offset}.
 */
public record Transfer(DeviceBuffer buffer, long offset, ByteBuffer host) {

    public Transfer {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(host, "host");
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset + " < 0");
        }
    }

    /** The whole of {@code host} at the start of {@code buffer}. */
    public static Transfer of(DeviceBuffer buffer, ByteBuffer host) {
        return new Transfer(buffer, 0, host);
    }
}
