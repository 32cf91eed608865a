package io.mstar.graph;

import java.util.List;
import java.util.Objects;

/**
 * Descriptor of a stored tensor: enough for a consumer to fetch its bytes from the producer's
 * tensor server (or its shared-memory arena) without asking anyone else.
 *
 * <p>Immutable. {@code dims} and {@code stride} are copied; {@code shmSegment},
 * {@code sourceNodeName} and {@code sourceGraphWalk} are nullable (null travels as an absent
 * field).
 *
 * @param uuid             64-bit tensor id, globally unique without coordination
 * @param dims             shape, outermost first
 * @param stride           strides in elements, one per dimension
 * @param dtype            element type name, e.g. {@code "bfloat16"}
 * @param nbytes           bytes this descriptor covers
 * @param address          producer-side device or host address (meaningful only to the producer)
 * @param offset           byte offset of this read in the producer's buffer (tensor-parallel
 *                         sharding reads a slice); default 0
 * @param sourceSessionId  where the producer's tensor server listens, {@code host:port}
 * @param sourceEntity     the entity holding the tensor ({@code worker-3}, {@code conductor})
 * @param sourceTpSize     producer's tensor-parallel group size; default 1
 * @param sourceTpRank     producer's rank in that group; default 0
 * @param shmSegment       arena segment name, null when the tensor is not in an arena
 * @param shmOffset        byte offset inside the arena segment; default 0
 * @param sourceNodeName   node that produced the tensor, nullable
 * @param sourceGraphWalk  walk in which it was produced, nullable
 */
public record TensorPointerInfo(
        long uuid,
        List<Long> dims,
        List<Long> stride,
        String dtype,
        long nbytes,
        long address,
        long offset,
        String sourceSessionId,
        String sourceEntity,
        int sourceTpSize,
        int sourceTpRank,
        String shmSegment,
        long shmOffset,
        String sourceNodeName,
        String sourceGraphWalk) {

    public TensorPointerInfo {
        dims = List.copyOf(Objects.requireNonNull(dims, "dims"));
        stride = List.copyOf(Objects.requireNonNull(stride, "stride"));
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(sourceSessionId, "source_session_id");
        Objects.requireNonNull(sourceEntity, "source_entity");
    }

    /** A descriptor with every optional field at its spec default. */
    public TensorPointerInfo(long uuid, List<Long> dims, List<Long> stride, String dtype, long nbytes,
                             long address, String sourceSessionId, String sourceEntity) {
        this(uuid, dims, stride, dtype, nbytes, address, 0L, sourceSessionId, sourceEntity, 1, 0,
                null, 0L, null, null);
    }

    /** A builder starting from the required fields. */
    public static Builder builder(long uuid, List<Long> dims, List<Long> stride, String dtype, long nbytes, long address, String sourceSessionId, String sourceEntity) {
        return new Builder(uuid, dims, stride, dtype, nbytes, address, sourceSessionId, sourceEntity);
    }

    /** A builder holding this value's fields, to derive a changed copy. */
    public Builder toBuilder() {
        Builder b = new Builder(uuid, dims, stride, dtype, nbytes, address, sourceSessionId, sourceEntity);
        b.offset = offset;
        b.sourceTpSize = sourceTpSize;
        b.sourceTpRank = sourceTpRank;
        b.shmSegment = shmSegment;
        b.shmOffset = shmOffset;
        b.sourceNodeName = sourceNodeName;
        b.sourceGraphWalk = sourceGraphWalk;
        return b;
    }

    /** Fluent construction; unset optional fields keep their spec defaults. Not thread-safe. */
    public static final class Builder {
        private final long uuid;
        private final List<Long> dims;
        private final List<Long> stride;
        private final String dtype;
        private final long nbytes;
        private final long address;
        private long offset;
        private final String sourceSessionId;
        private final String sourceEntity;
        private int sourceTpSize = 1;
        private int sourceTpRank;
        private String shmSegment;
        private long shmOffset;
        private String sourceNodeName;
        private String sourceGraphWalk;

        private Builder(long uuid, List<Long> dims, List<Long> stride, String dtype, long nbytes, long address, String sourceSessionId, String sourceEntity) {
            this.uuid = uuid;
            this.dims = dims;
            this.stride = stride;
            this.dtype = dtype;
            this.nbytes = nbytes;
            this.address = address;
            this.sourceSessionId = sourceSessionId;
            this.sourceEntity = sourceEntity;
        }

        public Builder offset(long offset) {
            this.offset = offset;
            return this;
        }

        public Builder sourceTpSize(int sourceTpSize) {
            this.sourceTpSize = sourceTpSize;
            return this;
        }

        public Builder sourceTpRank(int sourceTpRank) {
            this.sourceTpRank = sourceTpRank;
            return this;
        }

        public Builder shmSegment(String shmSegment) {
            this.shmSegment = shmSegment;
            return this;
        }

        public Builder shmOffset(long shmOffset) {
            this.shmOffset = shmOffset;
            return this;
        }

        public Builder sourceNodeName(String sourceNodeName) {
            this.sourceNodeName = sourceNodeName;
            return this;
        }

        public Builder sourceGraphWalk(String sourceGraphWalk) {
            this.sourceGraphWalk = sourceGraphWalk;
            return this;
        }

        public TensorPointerInfo build() {
            return new TensorPointerInfo(uuid, dims, stride, dtype, nbytes, address, offset, sourceSessionId, sourceEntity, sourceTpSize, sourceTpRank, shmSegment, shmOffset, sourceNodeName, sourceGraphWalk);
        }
    }
}
