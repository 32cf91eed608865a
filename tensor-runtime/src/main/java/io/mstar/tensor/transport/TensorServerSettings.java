package io.mstar.tensor.transport;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Objects;

/**
 * Where a producer's tensor server listens and how peers reach it.
 *
 * @param bindAddress    the address the data port binds: {@code 127.0.0.1} for one host, the pod IP on Kubernetes,
 *                       {@code 0.0.0.0} for every interface
 * @param port           the data port; 0 picks a free one (descriptors carry whichever was bound)
 * @param advertisedHost the host peers use to reach the server, the host part of every descriptor's
 *                       {@code source_session_id} ({@link #advertise})
 * @param ioThreads      server I/O threads
 * @param role           meter role: {@code worker} or {@code conductor}
 * @param tls            TLS on the data port ({@link DataPlaneTls#disabled()}: plain HTTP); with TLS the server
 *                       serves HTTPS only
 */
public record TensorServerSettings(String bindAddress, int port, String advertisedHost, int ioThreads, String role,
                                   DataPlaneTls tls) {

    public TensorServerSettings {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(advertisedHost, "advertisedHost");
        Objects.requireNonNull(role, "role");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535, was " + port);
        }
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be >= 1, was " + ioThreads);
        }
    }

    /** Plain HTTP on the data port. */
    public TensorServerSettings(String bindAddress, int port, String advertisedHost, int ioThreads, String role) {
        this(bindAddress, port, advertisedHost, ioThreads, role, DataPlaneTls.disabled());
    }

    /**
     * The host to advertise: {@code configured} when set; else the bind address when it names one interface (a
     * server bound to loopback is reachable only there); else this host's address.
     */
    public static String advertise(String bindAddress, String configured) {
        if (configured != null && !configured.isBlank()) {
            return configured.trim();
        }
        if (!bindAddress.equals("0.0.0.0") && !bindAddress.equals("::") && !bindAddress.isBlank()) {
            return bindAddress;
        }
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            return "127.0.0.1";
        }
    }
}
