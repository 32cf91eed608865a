package io.mstar.tensor.transport;

/** When a reader takes the arena path instead of HTTP. */
public enum SameHostPolicy {
    /**
     * The default: the descriptor names an arena file, the host part of its {@code source_session_id}
     * is one of this process's own host names, and the file is visible in the local arena directory.
     * The host check keeps a pod from trusting a same-named file on a different node; the file check
     * covers a producer on this host whose {@code /dev/shm} is not shared with us.
     */
    HOST_AND_FILE,
    /**
     * The arena file is visible here, whatever the session host says: for pods of one node that share
     * a {@code /dev/shm} volume but advertise different pod IPs. Names carry pid and incarnation, so a
     * visible file is the producer's.
     */
    FILE_ONLY,
    /** Always HTTP (tests, or a host where shared memory is not wanted). */
    NEVER
}
