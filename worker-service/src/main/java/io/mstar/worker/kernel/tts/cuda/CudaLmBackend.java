package io.mstar.worker.kernel.tts.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.worker.kernel.tts.LmBackend;
import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kv.KvCacheLayout;
import io.mstar.worker.resident.ResidentTable;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * The toy-tts transformer on a GPU ({@code src/main/cuda/toy_tts_kernels.cu}): one launch per batch, one block per
 * job, K/V written and read in the KV pool on the device through each job's page table, logits copied back for the
 * jobs that want them. The weights are uploaded once, at construction, into one device buffer that lives until
 * {@link #close()} (the worker's life). Per batch it allocates one scratch buffer (job table, tokens, page tables,
 * logits) and frees it before returning. The logits copy synchronizes the stream, so the pool holds the new K/V
 * when {@link #run} returns and a device fault surfaces here. Owned by the engine loop, like its device.
 */
public final class CudaLmBackend implements LmBackend, AutoCloseable {

    static final String PTX_RESOURCE = "toy_tts_kernels.ptx";
    static final String NO_PTX_REASON = "toy-tts CUDA kernels unavailable: this build has no PTX (nvcc was not on the PATH)";
    static final String FORWARD = "toy_tts_forward";
    static final String LAYOUT_TOTAL = "toy_tts_layout_total";
    /** The kernel's block size: its attention splits 16 dimensions over 8 threads each. */
    static final int THREADS = 128;
    /** The forward's block (TTS_FORWARD_THREADS), which its thread mapping assumes: 4 heads of 128 threads. */
    static final int FORWARD_THREADS = 512;
    /**
     * Positions one job may attend over: the resident page table's width follows from it. The kernel streams the
     * positions (no shared-memory bound), so this is a sizing choice, not a kernel limit.
     */
    public static final int MAX_POSITIONS = 8192;

    private final CudaDevice device;
    private final CUfunction forward;
    private final CUfunction residentGather;
    private final CUfunction residentBias;
    private DeviceBuffer weights;

    /** Loads the kernels into {@code device} and uploads the weights. */
    public CudaLmBackend(CudaDevice device, ToyTtsWeights model) {
        String ptx = ptx(PTX_RESOURCE);
        if (ptx == null) {
            throw new DeviceException(DeviceException.Reason.INVALID_ARGUMENT, device.name(), NO_PTX_REASON);
        }
        this.device = device;
        CUmodule module = device.loadModule(ptx);
        this.forward = device.function(module, FORWARD);
        this.residentGather = device.function(module, "toy_tts_resident_gather");
        this.residentBias = device.function(module, "toy_tts_resident_bias");
        checkLayout(device.function(module, LAYOUT_TOTAL), model);
        this.weights = DeviceUploads.floats(device, model.values());
    }

    /** The .cu file hard-codes the layout; a weights class that changed without it would compute garbage. */
    private void checkLayout(CUfunction layoutTotal, ToyTtsWeights model) {
        DeviceBuffer out = device.allocate(Long.BYTES);
        try {
            device.launch(layoutTotal, 1, 1, out.address());
            ByteBuffer total = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            device.copyToHost(out, 0, total);
            if (total.getLong(0) != model.offsets().total()) {
                throw new IllegalStateException("toy_tts_kernels.cu lays out " + total.getLong(0)
                        + " weights, ToyTtsWeights " + model.offsets().total());
            }
        } finally {
            device.free(out);
        }
    }

    /** Whether this build carries the kernels' PTX (a GPU is still needed to run them). */
    public static boolean available() {
        return unavailableReason().isEmpty();
    }

    public static Optional<String> unavailableReason() {
        return CudaLmBackend.class.getResource(PTX_RESOURCE) == null ? Optional.of(NO_PTX_REASON) : Optional.empty();
    }

    @Override
    public float[][] run(Device on, DeviceBuffer pool, KvCacheLayout layout, List<LmJob> jobs) {
        if (on != device || weights == null) {
            throw new IllegalArgumentException("toy-tts CUDA backend is bound to " + device.name() + (weights == null
                    ? " and closed" : ", not " + on.name()));
        }
        if (layout.bytesPerToken() != ToyTtsWeights.BYTES_PER_TOKEN) {
            throw new IllegalArgumentException("KV slots of " + layout.bytesPerToken() + " bytes, the kernel writes "
                    + ToyTtsWeights.BYTES_PER_TOKEN);
        }
        LmJobTable table = LmJobTable.of(jobs, MAX_POSITIONS);
        if (jobs.isEmpty()) {
            return new float[0][];
        }
        int rows = table.logitRows();
        long logitsOffset = LmJobTable.align(table.bytes());
        DeviceBuffer scratch = device.allocate(logitsOffset + (long) rows * ToyTtsWeights.VOCAB * Float.BYTES);
        try {
            device.copyFromHost(table.host(), scratch, 0);
            long base = scratch.address();
            device.launch(forward, jobs.size(), FORWARD_THREADS, weights.address(), pool.address(), base,
                    base + table.tokenAt() * 4L, base + table.pageAt() * 4L, base + logitsOffset, layout.pageSize());
            ByteBuffer out = ByteBuffer.allocateDirect(Math.max(1, rows * ToyTtsWeights.VOCAB * Float.BYTES))
                    .order(ByteOrder.LITTLE_ENDIAN);
            if (rows > 0) {
                device.copyToHost(scratch, logitsOffset, out);
            } // else nothing to read back: the step's completion event covers the launch
            return LmJobTable.logits(jobs, out);
        } finally {
            device.free(scratch);
        }
    }

    // ---- a captured resident step's launches (docs/resident-planning.md#the-toy-tts-lm): no copies, no allocation

    /**
     * Fills {@code jobs} ({@code padded} job rows) and {@code tokens} from each real row's narrow cells: its token
     * fed at its sequence length, its pages at its row of {@code pageTable}; padding rows feed nothing.
     */
    public void launchResidentGather(DeviceBuffer upload, ResidentTable narrow, int tokenColumn, int seqLenColumn,
            ResidentTable pageTable, DeviceBuffer jobs, DeviceBuffer tokens, int padded) {
        device.launch(residentGather, 1, THREADS, upload.address(), narrow.buffer().address(), narrow.width(),
                tokenColumn, seqLenColumn, pageTable.width(), jobs.address(), tokens.address(), padded);
    }

    /** The forward over {@code blocks} jobs whose page offsets index {@code pageTables}; logits for rows that want them. */
    public void launchForward(DeviceBuffer pool, int pageSize, DeviceBuffer jobs, DeviceBuffer tokens,
            DeviceBuffer pageTables, DeviceBuffer logits, int blocks) {
        device.launch(forward, blocks, FORWARD_THREADS, weights.address(), pool.address(), jobs.address(),
                tokens.address(), pageTables.address(), logits.address(), pageSize);
    }

    /** The EOS ramp (or the mask, with ignore_eos) on each real row's logits, from its narrow cells. */
    public void launchResidentBias(DeviceBuffer upload, ResidentTable narrow, int generatedColumn, int ignoreEosColumn,
            DeviceBuffer logits) {
        device.launch(residentBias, 1, THREADS, upload.address(), narrow.buffer().address(), narrow.width(),
                generatedColumn, ignoreEosColumn, logits.address());
    }

    /** The device it runs on. */
    public CudaDevice device() {
        return device;
    }

    /** Frees the weights; later runs fail. */
    @Override
    public void close() {
        if (weights != null) {
            DeviceBuffer w = weights;
            weights = null;
            device.free(w);
        }
    }

    /** The PTX resource {@code resource} beside this class, or null when the build had no nvcc. */
    static String ptx(String resource) {
        try (InputStream in = CudaLmBackend.class.getResourceAsStream(resource)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
