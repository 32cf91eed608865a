package io.mstar.tensor.transport;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * How a process reads other processes' tensors.
 *
 * @param role            meter role: {@code worker} or {@code conductor}
 * @param localHosts      this host's names as peers advertise them in {@code source_session_id}
 *                        (its advertised host, {@code localhost}, {@code 127.0.0.1}...); used by
 *                        {@link SameHostPolicy#HOST_AND_FILE}
 * @param arenaDirectory  where producers on this host keep their arenas; default {@code /dev/shm}
 * @param sameHost        when the arena path is taken; default {@link SameHostPolicy#HOST_AND_FILE}
 * @param copyThreads     threads copying out of arenas (memory bandwidth, not I/O); default 2
 * @param ioThreads       HTTP client event-loop threads; default 2
 * @param readTimeout     longest silence from a producer before a read fails as retriable {@code IO};
 *                        default 30 s (a stalled producer must turn into an error, never a hang)
 * @param inlineCopyMaxBytes arena reads of a mapped segment up to this size are copied on the calling thread;
 *                        default {@value #DEFAULT_INLINE_COPY_MAX_BYTES}: such a copy takes a few microseconds, less
 *                        than handing it to a copy thread and the completion back to the caller's loop. 0 sends
 *                        every copy to the pool.
 * @param tls             TLS on the data port; default {@link DataPlaneTls#disabled()} (plain HTTP). With TLS every
 *                        HTTP read is {@code https://}, verifying the server's certificate, and a plain-text server
 *                        fails the read with {@link TensorTransportException.Reason#TLS}; never a fall back to http
 */
public record ReaderSettings(String role, Set<String> localHosts, Path arenaDirectory, SameHostPolicy sameHost,
                             int copyThreads, int ioThreads, Duration readTimeout, int inlineCopyMaxBytes,
                             DataPlaneTls tls) {

    public static final int DEFAULT_INLINE_COPY_MAX_BYTES = 64 * 1024;

    public ReaderSettings {
        Objects.requireNonNull(role, "role");
        localHosts = Set.copyOf(localHosts);
        Objects.requireNonNull(arenaDirectory, "arenaDirectory");
        Objects.requireNonNull(sameHost, "sameHost");
        Objects.requireNonNull(readTimeout, "readTimeout");
        Objects.requireNonNull(tls, "tls");
        if (copyThreads < 1 || ioThreads < 1) {
            throw new IllegalArgumentException("copyThreads and ioThreads must be >= 1");
        }
        if (inlineCopyMaxBytes < 0) {
            throw new IllegalArgumentException("inlineCopyMaxBytes must be >= 0, was " + inlineCopyMaxBytes);
        }
    }

    /** Plain HTTP on the data port. */
    public ReaderSettings(String role, Set<String> localHosts, Path arenaDirectory, SameHostPolicy sameHost,
                          int copyThreads, int ioThreads, Duration readTimeout, int inlineCopyMaxBytes) {
        this(role, localHosts, arenaDirectory, sameHost, copyThreads, ioThreads, readTimeout, inlineCopyMaxBytes,
                DataPlaneTls.disabled());
    }

    public static ReaderSettings defaults(String role, Set<String> localHosts) {
        return new ReaderSettings(role, localHosts, Path.of("/dev/shm"), SameHostPolicy.HOST_AND_FILE, 2, 2,
                Duration.ofSeconds(30), DEFAULT_INLINE_COPY_MAX_BYTES);
    }

    public ReaderSettings withSameHost(SameHostPolicy policy) {
        return new ReaderSettings(role, localHosts, arenaDirectory, policy, copyThreads, ioThreads, readTimeout,
                inlineCopyMaxBytes, tls);
    }

    public ReaderSettings withArenaDirectory(Path directory) {
        return new ReaderSettings(role, localHosts, directory, sameHost, copyThreads, ioThreads, readTimeout,
                inlineCopyMaxBytes, tls);
    }

    public ReaderSettings withTls(DataPlaneTls dataPlaneTls) {
        return new ReaderSettings(role, localHosts, arenaDirectory, sameHost, copyThreads, ioThreads, readTimeout,
                inlineCopyMaxBytes, dataPlaneTls);
    }
}
