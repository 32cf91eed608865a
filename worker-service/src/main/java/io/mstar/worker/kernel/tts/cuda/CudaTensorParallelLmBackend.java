package io.mstar.worker.kernel.tts.cuda;

import static io.mstar.worker.kernel.tts.ToyTtsWeights.D;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.FFN;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.HEAD_DIM;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.LAYERS;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.MAX_TP;
import static io.mstar.worker.kernel.tts.ToyTtsWeights.VOCAB;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.worker.kernel.tts.LmBackend;
import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.LmShard;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kv.KvCacheLayout;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * One rank of the toy-tts lm on a tensor-parallel group of GPUs ({@code src/main/cuda/toy_tts_tp_kernels.cu};
 * docs/toy-tts.md#tensor-parallelism): the rank's {@link LmShard} on its device, its KV pool holding its heads' K and
 * V only, and per layer the row-parallel projections' block partials shared by one {@link Collective#allGather} each
 * on the device ({@code 2 * LAYERS} a batch, whatever its size), as the host ranks do ({@code
 * TensorParallelLmBackend}). The kernels sum in one order at every tp_size, so a group computes the bits of
 * {@link #whole one rank holding the whole model} on the same GPU; sampling is rank 0's, as on the host.
 *
 * <p>Per batch one scratch buffer (the job table, the residual stream, the block partials, the logits), freed before
 * returning; the logits copy (or, with none wanted, an explicit synchronize) makes the pool hold the new K/V when
 * {@link #run} returns. Owned by the rank's step thread, like its device and collective.
 */
public final class CudaTensorParallelLmBackend implements LmBackend, AutoCloseable {

    static final String PTX_RESOURCE = "toy_tts_tp_kernels.ptx";
    static final String NO_PTX_REASON = "toy-tts tensor-parallel CUDA kernels unavailable: this build has no PTX (nvcc "
            + "was not on the PATH)";
    /** The attention, MLP and logits kernels' block (TP_THREADS). */
    static final int THREADS = 128;
    private static final int ADD_THREADS = 256;

    private final CudaDevice device;
    private final Collective collective;
    private final LmShard shard;
    private final CUfunction embed;
    private final CUfunction attention;
    private final CUfunction mlp;
    private final CUfunction add;
    private final CUfunction logits;
    private DeviceBuffer weights;

    private CudaTensorParallelLmBackend(CudaDevice device, LmShard shard, Collective collective) {
        String ptx = CudaLmBackend.ptx(PTX_RESOURCE);
        if (ptx == null) {
            throw new DeviceException(DeviceException.Reason.INVALID_ARGUMENT, device.name(), NO_PTX_REASON);
        }
        this.device = device;
        this.shard = shard;
        this.collective = collective;
        CUmodule module = device.loadModule(ptx);
        this.embed = device.function(module, "toy_tts_tp_embed");
        this.attention = device.function(module, "toy_tts_tp_attention");
        this.mlp = device.function(module, "toy_tts_tp_mlp");
        this.add = device.function(module, "toy_tts_tp_add");
        this.logits = device.function(module, "toy_tts_tp_logits");
        checkDims(device, device.function(module, "toy_tts_tp_dims"));
        this.weights = DeviceUploads.floats(device, shard.values());
    }

    /**
     * The .cu file hard-codes the model's sizes (d_model, head size, the largest tp_size, the MLP's width, the
     * vocabulary); a model that changed without it would compute garbage, so it is refused here.
     */
    static void checkDims(CudaDevice device, CUfunction dims) {
        int[] expected = {D, HEAD_DIM, MAX_TP, FFN, VOCAB};
        DeviceBuffer out = device.allocate((long) expected.length * Integer.BYTES);
        try {
            device.launch(dims, 1, 1, out.address());
            ByteBuffer bytes = ByteBuffer.allocateDirect(expected.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            device.copyToHost(out, 0, bytes);
            int[] compiled = new int[expected.length];
            bytes.asIntBuffer().get(compiled);
            if (!Arrays.equals(compiled, expected)) {
                throw new IllegalStateException(PTX_RESOURCE + " is compiled for d_model, head size, largest tp_size, "
                        + "MLP width and vocabulary " + Arrays.toString(compiled) + ", ToyTtsWeights has "
                        + Arrays.toString(expected));
            }
        } finally {
            device.free(out);
        }
    }

    /**
     * Rank {@code collective.rank()} of a group of {@code collective.size()}: uploads the rank's shard of
     * {@code model}. The collective is its owner's to close.
     *
     * @throws IllegalArgumentException when the group's size does not split the model
     */
    public static CudaTensorParallelLmBackend rank(CudaDevice device, ToyTtsWeights model, Collective collective) {
        return new CudaTensorParallelLmBackend(device, LmShard.of(model, collective.rank(), collective.size()),
                collective);
    }

    /** One rank holding the whole model, no collective: the bits a group of these kernels computes, on one GPU. */
    public static CudaTensorParallelLmBackend whole(CudaDevice device, ToyTtsWeights model) {
        return new CudaTensorParallelLmBackend(device, LmShard.whole(model), null);
    }

    public static boolean available() {
        return unavailableReason().isEmpty();
    }

    public static Optional<String> unavailableReason() {
        return CudaTensorParallelLmBackend.class.getResource(PTX_RESOURCE) == null ? Optional.of(NO_PTX_REASON)
                : Optional.empty();
    }

    /** Bytes of one KV slot on this rank: {@link ToyTtsWeights#bytesPerToken(int)} of the group's size. */
    public long bytesPerToken() {
        return (long) shard.slotFloats() * Float.BYTES;
    }

    /**
     * {@inheritDoc}
     *
     * @throws CollectiveException when the group cannot complete a gather (a peer lost: TIMEOUT; ABORTED): the batch
     *                             failed and the group is to be rebuilt; the pool may hold some of its K/V
     */
    @Override
    public float[][] run(Device on, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs) {
        if (on != device || weights == null) {
            throw new IllegalArgumentException("toy-tts tensor-parallel CUDA backend is bound to " + device.name()
                    + (weights == null ? " and closed" : ", not " + on.name()));
        }
        if (layout.bytesPerToken() != bytesPerToken()) {
            throw new IllegalArgumentException("the KV pool holds " + layout.bytesPerToken() + " bytes per token; this"
                    + " rank keeps " + bytesPerToken() + " (ToyTtsWeights.bytesPerToken(tp_size))");
        }
        LmJobTable table = LmJobTable.of(jobs, CudaLmBackend.MAX_POSITIONS);
        int rows = table.tokens();
        if (rows == 0) {
            return new float[jobs.size()][]; // no tokens, no collectives: every rank has the same jobs
        }
        long n = (long) rows * D;
        long xAt = LmJobTable.align(table.bytes());
        long blocksAt = xAt + LmJobTable.align(n * Float.BYTES);
        long logitsAt = blocksAt + LmJobTable.align(MAX_TP * n * Float.BYTES);
        long logitBytes = (long) table.logitRows() * VOCAB * Float.BYTES;
        DeviceBuffer scratch = device.allocate(logitsAt + Math.max(logitBytes, Float.BYTES));
        try {
            device.copyFromHost(table.host(), scratch, 0);
            long base = scratch.address();
            long jobsAddr = base;
            long tokens = base + table.tokenAt() * 4L;
            long pages = base + table.pageAt() * 4L;
            long x = base + xAt;
            long blocks = base + blocksAt;
            ToyTtsWeights.Offsets o = shard.offsets();
            device.launch(embed, rows, D, at(o.embedding()), tokens, x);
            int addGrid = (int) ((n + ADD_THREADS - 1) / ADD_THREADS);
            for (int l = 0; l < LAYERS; l++) {
                device.launch(attention, jobs.size(), THREADS, x, at(o.attnNorm()[l]), at(o.wq()[l]), at(o.wk()[l]),
                        at(o.wv()[l]), at(o.wo()[l]), at(o.invFreq()), pool.address(), jobsAddr, pages, blocks, rows,
                        shard.dims(), l, layout.pageSize(), shard.slotFloats(), shard.block());
                gather(scratch, blocksAt, n);
                device.launch(add, addGrid, ADD_THREADS, blocks, x, n);
                device.launch(mlp, rows, THREADS, x, at(o.mlpNorm()[l]), at(o.w1()[l]), at(o.w2()[l]), blocks, rows,
                        shard.ffn(), FFN, shard.block());
                gather(scratch, blocksAt, n);
                device.launch(add, addGrid, ADD_THREADS, blocks, x, n);
            }
            if (table.logitRows() == 0) {
                device.synchronize();
                return new float[jobs.size()][];
            }
            device.launch(logits, jobs.size(), THREADS, x, at(o.finalNorm()), at(o.head()), at(o.bytePrior()),
                    jobsAddr, base + logitsAt);
            ByteBuffer out = ByteBuffer.allocateDirect((int) logitBytes).order(ByteOrder.LITTLE_ENDIAN);
            device.copyToHost(scratch, logitsAt, out);
            return LmJobTable.logits(jobs, out);
        } finally {
            device.free(scratch);
        }
    }

    /** Every rank's blocks of the {@code n}-float partials at {@code blocksAt} to every rank, in place. */
    private void gather(DeviceBuffer scratch, long blocksAt, long n) {
        if (collective == null) {
            return; // one rank holds every block
        }
        long bytesPerRank = shard.blocks() * n * Float.BYTES;
        collective.allGather(scratch, blocksAt + collective.rank() * bytesPerRank, scratch, blocksAt, bytesPerRank);
    }

    private long at(int floatOffset) {
        return weights.address() + (long) floatOffset * Float.BYTES;
    }

    /** Frees the weights; later runs fail. The collective is its owner's to close. */
    @Override
    public void close() {
        if (weights != null) {
            DeviceBuffer w = weights;
            weights = null;
            device.free(w);
        }
    }
}
