package io.mstar.wire;

import java.util.Base64;
import java.util.Objects;

/**
 * Extension: a tensor-parallel group's rank 0 handing its followers what they need to join its next NCCL
 * communicator (docs/tensor-parallelism.md#gpu-ranks). Sent each time rank 0 makes one: at the group's first
 * collective call and after every failure; a follower joins with the latest it has not joined with yet.
 *
 * @param collective   the group's collective: unique per deployment, model, node group and instance
 * @param generation   rank 0's count of communicators it made for the group, from 1; for logs and ordering
 * @param ncclUniqueId base64 of the {@code ncclUniqueId} (128 bytes) that names the communicator
 */
public record CollectiveBootstrap(String collective, long generation, String ncclUniqueId) implements WorkerMessageBody {

    /** The size of an {@code ncclUniqueId}. */
    public static final int NCCL_UNIQUE_ID_BYTES = 128;

    public CollectiveBootstrap {
        Objects.requireNonNull(collective, "collective");
        Objects.requireNonNull(ncclUniqueId, "nccl_unique_id");
        byte[] id;
        try {
            id = Base64.getDecoder().decode(ncclUniqueId);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("nccl_unique_id is not base64: " + e.getMessage(), e);
        }
        if (id.length != NCCL_UNIQUE_ID_BYTES) {
            throw new IllegalArgumentException("nccl_unique_id holds " + id.length + " bytes, not "
                    + NCCL_UNIQUE_ID_BYTES);
        }
    }

    /** The message for communicator {@code id} of {@code collective}. */
    public static CollectiveBootstrap of(String collective, long generation, byte[] id) {
        return new CollectiveBootstrap(collective, generation, Base64.getEncoder().encodeToString(id));
    }

    /** The unique id's bytes (a fresh array). */
    public byte[] uniqueId() {
        return Base64.getDecoder().decode(ncclUniqueId);
    }
}
