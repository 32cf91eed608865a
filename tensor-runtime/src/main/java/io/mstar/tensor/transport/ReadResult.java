package io.mstar.tensor.transport;

/** One read that landed: what was read, how many bytes, over which transport. */
public record ReadResult(long uuid, long nbytes, Transport transport) {
}
