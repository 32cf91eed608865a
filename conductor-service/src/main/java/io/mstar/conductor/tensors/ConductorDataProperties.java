package io.mstar.conductor.tensors;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The conductor's tensor data plane ({@code mstar.conductor.data.*}).
 *
 * @param bindHost       address the tensor server binds (default {@code 0.0.0.0})
 * @param port           the data port workers read the conductor's input tensors from (default 0: any free port;
 *                       descriptors carry the bound port, so workers find it either way). Set a fixed port where a
 *                       NetworkPolicy or firewall must name it (Kubernetes).
 * @param advertisedHost host stamped into descriptors ({@code source_session_id}); empty (the default) uses this
 *                       machine's host name. On Kubernetes set it to the pod IP or a stable service name.
 * @param ioThreads      tensor server I/O threads (default 2)
 */
@ConfigurationProperties("mstar.conductor.data")
public record ConductorDataProperties(@DefaultValue("0.0.0.0") String bindHost, @DefaultValue("0") int port,
        @DefaultValue("") String advertisedHost, @DefaultValue("2") int ioThreads) {

    public ConductorDataProperties {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("mstar.conductor.data.port must be 0..65535, was " + port);
        }
        if (ioThreads < 1) {
            throw new IllegalArgumentException("mstar.conductor.data.io-threads must be >= 1, was " + ioThreads);
        }
    }
}
