package io.mstar.tensor.transport;

/** How a read's bytes travelled; the {@code transport} tag of the transfer meters. Values are stable. */
public enum Transport {
    /** Copied from the producer's arena on this host. */
    SHM("shm"),
    /** Fetched from the producer's tensor server. */
    HTTP("http");

    private final String tag;

    Transport(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
