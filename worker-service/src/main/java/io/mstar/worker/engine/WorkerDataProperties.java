package io.mstar.worker.engine;

import java.nio.file.Path;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The worker's data plane ({@code mstar.worker.data.*}): where its tensor server listens and how much it may hold.
 *
 * @param bindAddress    address the tensor server binds (default {@code 0.0.0.0}: every interface; the local stack
 *                       passes {@code 127.0.0.1}, the Helm chart the pod IP)
 * @param port           the data port (default 0: any free port; the descriptors carry whichever was bound). Fix it
 *                       where a NetworkPolicy must name it
 * @param advertisedHost host peers and the conductor use to reach the tensor server, the host part of every
 *                       descriptor's {@code source_session_id} (default empty: the bind address when it names one
 *                       interface, else this host's address; on Kubernetes the chart sets the pod IP)
 * @param arenaDirectory where the shared-memory arena lives (default {@code /dev/shm}); same-host peers read there
 * @param arenaSegment   bytes per arena segment (default 256MB); tensors beyond a full arena spill to files
 * @param arenaSegments  segments at most (default 8)
 * @param hostMemory     capacity of the host device when there is no GPU (default 4GB): allocations beyond fail
 *                       the request that asked, never the worker
 */
@ConfigurationProperties("mstar.worker.data")
public record WorkerDataProperties(@DefaultValue("0.0.0.0") String bindAddress, @DefaultValue("0") int port,
        @DefaultValue("") String advertisedHost, @DefaultValue("/dev/shm") Path arenaDirectory,
        @DefaultValue("256MB") DataSize arenaSegment, @DefaultValue("8") int arenaSegments,
        @DefaultValue("4GB") DataSize hostMemory) {

    public WorkerDataProperties {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("mstar.worker.data.port must be 0..65535, was " + port);
        }
    }
}
