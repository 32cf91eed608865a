package io.mstar.worker.tp;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mstar.messaging.EntityId;
import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.NcclCollective;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.wire.CollectiveBootstrap;
import io.mstar.wire.WorkerMessage;

/**
 * How a GPU rank joins its group's next NCCL communicator (docs/tensor-parallelism.md#gpu-ranks), for
 * {@link RejoiningCollective}: rank 0 makes a unique id, hands it to every follower over the control plane
 * ({@link CollectiveBootstrap}) and joins; a follower takes the latest id it has not joined with
 * ({@link NcclBootstraps}) and joins. Every wait is bounded by the group's timeout. Called on the rank's step thread.
 */
public final class NcclJoin implements Supplier<Collective> {

    private static final Logger log = LoggerFactory.getLogger(NcclJoin.class);

    /** How communicators are made: NCCL's, on the rank's GPU; tests of the hand-over put another behind it. */
    interface Communicators {
        /** A new unique id (rank 0). */
        byte[] uniqueId();

        /** Joins the communicator {@code id} names as {@code rank} of {@code size}, within {@code timeout}. */
        Collective join(int rank, int size, byte[] id, Duration timeout);
    }

    private final String collective;
    private final Communicators communicators;
    private final int rank;
    private final int size;
    private final Duration timeout;
    private final List<EntityId> followers;
    private final BiConsumer<EntityId, WorkerMessage> send;
    private final NcclBootstraps bootstraps;
    private long generation;

    /**
     * @param collective the group's collective name (what the bootstraps are keyed by)
     * @param followers  rank 0's followers in rank order (rank 0 sends to them); empty on a follower
     * @param send       sends a message to a worker's inbox (the control plane)
     * @param bootstraps where a follower's ids arrive
     */
    public NcclJoin(String collective, CudaDevice device, int rank, int size, Duration timeout,
            List<EntityId> followers, BiConsumer<EntityId, WorkerMessage> send, NcclBootstraps bootstraps) {
        this(collective, nccl(Objects.requireNonNull(device, "device")), rank, size, timeout, followers, send,
                bootstraps);
    }

    NcclJoin(String collective, Communicators communicators, int rank, int size, Duration timeout,
            List<EntityId> followers, BiConsumer<EntityId, WorkerMessage> send, NcclBootstraps bootstraps) {
        this.collective = Objects.requireNonNull(collective, "collective");
        this.communicators = communicators;
        this.rank = rank;
        this.size = size;
        this.timeout = timeout;
        this.followers = List.copyOf(followers);
        this.send = send;
        this.bootstraps = bootstraps;
        if (rank == 0 && this.followers.size() != size - 1) {
            throw new IllegalArgumentException("rank 0 of " + size + " needs " + (size - 1) + " followers, has "
                    + this.followers);
        }
    }

    @Override
    public Collective get() {
        byte[] id;
        if (rank == 0) {
            id = communicators.uniqueId();
            generation++;
            WorkerMessage bootstrap = WorkerMessage.of(CollectiveBootstrap.of(collective, generation, id));
            followers.forEach(f -> send.accept(f, bootstrap));
            log.info("NCCL communicator {} generation {}: unique id sent to {}", collective, generation, followers);
        } else {
            CollectiveBootstrap bootstrap = bootstraps.take(collective, rank, size, timeout);
            id = bootstrap.uniqueId();
            log.info("NCCL communicator {} generation {}: joining as rank {}", collective, bootstrap.generation(), rank);
        }
        return communicators.join(rank, size, id, timeout);
    }

    private static Communicators nccl(CudaDevice device) {
        return new Communicators() {
            @Override
            public byte[] uniqueId() {
                return NcclCollective.uniqueId();
            }

            @Override
            public Collective join(int rank, int size, byte[] id, Duration timeout) {
                return NcclCollective.join(device, rank, size, id, timeout);
            }
        };
    }
}
