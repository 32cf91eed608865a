package io.mstar.conductor.tensors;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The conductor's tensor data plane ({@code mstar.conductor.data.*}).
 *
 * @param bindAddress    address the tensor server binds (default {@code 0.0.0.0}: every interface; the local stack
 *                       passes {@code 127.0.0.1}, the Helm chart the pod IP)
 * @param port           the data port workers read the conductor's input tensors from (default 0: any free port;
 *                       descriptors carry the bound port, so workers find it either way). Set a fixed port where a
 *                       NetworkPolicy or firewall must name it (Kubernetes).
 * @param advertisedHost host stamped into descriptors ({@code source_session_id}); empty (the default) uses the bind
 *                       address when it names one interface, else this machine's address. On Kubernetes the chart
 *                       sets the pod IP.
 * @param ioThreads      tensor server I/O threads (default 2)
 * @param inlineInputMaxBytes a worker's initial inputs travel inside its {@code NewRequest} when each is one of the
 *                       client's inputs of at most this many bytes (default 1024; 0: never), so its first pass starts
 *                       without a read; larger ones are read from this data port
 */
@ConfigurationProperties("mstar.conductor.data")
public record ConductorDataProperties(@DefaultValue("0.0.0.0") String bindAddress, @DefaultValue("0") int port,
        @DefaultValue("") String advertisedHost, @DefaultValue("2") int ioThreads,
        @DefaultValue("1024") int inlineInputMaxBytes) {

    public ConductorDataProperties {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("mstar.conductor.data.port must be 0..65535, was " + port);
        }
        if (ioThreads < 1) {
            throw new IllegalArgumentException("mstar.conductor.data.io-threads must be >= 1, was " + ioThreads);
        }
        if (inlineInputMaxBytes < 0) {
            throw new IllegalArgumentException("mstar.conductor.data.inline-input-max-bytes must not be negative, was "
                    + inlineInputMaxBytes);
        }
    }
}
