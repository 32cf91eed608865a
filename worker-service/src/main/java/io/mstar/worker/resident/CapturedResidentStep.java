package io.mstar.worker.resident;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.CudaGraph;

/**
 * One captured decode step for a (walk, padded batch size) and one of its two graph slots: the buffers it addresses
 * (its upload, the sampled tokens, every resource's static scratch) and the work the resources recorded into it, by
 * resource key ({@link #streams}). On a {@link CudaDevice} the work is a CUDA graph: a resource's {@link #record}ed
 * launches run inside the stream capture and {@link #replay} launches the graph. On any other device the recorded
 * work is kept as host operations and a replay runs them in order, reading and writing the tables in device memory,
 * so the same planning runs and is tested without a GPU.
 */
public final class CapturedResidentStep implements AutoCloseable {

    private final Device device;
    private final String walk;
    private final int padded;
    private final int graphSlot;
    private final DeviceBuffer upload;
    private final DeviceBuffer sampled;
    private final Map<String, List<Runnable>> streams = new LinkedHashMap<>();
    private final List<Runnable> ops = new ArrayList<>();
    private final List<DeviceBuffer> scratch = new ArrayList<>();
    private boolean recording;
    private boolean readsTables;
    private boolean hostPlanned;
    private CudaGraph graph;
    private long replays;
    private boolean closed;

    CapturedResidentStep(Device device, String walk, int padded, int graphSlot, long uploadBytes) {
        this.device = device;
        this.walk = walk;
        this.padded = padded;
        this.graphSlot = graphSlot;
        this.upload = device.allocate(uploadBytes);
        try {
            this.sampled = device.allocate((long) padded * Integer.BYTES);
        } catch (RuntimeException e) {
            device.free(upload);
            throw e;
        }
    }

    /** Records what {@code work} issues (a resource's gathers, the forward, commits): CUDA graph or host ops. */
    void capture(Runnable work) {
        recording = true;
        try {
            if (device instanceof CudaDevice cuda) {
                graph = cuda.capture(work);
            } else {
                work.run();
            }
        } finally {
            recording = false;
        }
    }

    /**
     * Records {@code op} under resource {@code key}: on CUDA it runs now, inside the stream capture (its launches are
     * what the graph replays); elsewhere it is kept and run at each replay.
     */
    public void record(String key, Runnable op) {
        if (!recording) {
            throw new IllegalStateException("record() runs only inside a capture (resident_gather/_commit, forward)");
        }
        streams.computeIfAbsent(key, k -> new ArrayList<>()).add(op);
        if (device instanceof CudaDevice) {
            op.run();
        } else {
            ops.add(op);
        }
    }

    /** A zeroed device buffer this step owns until it closes: what a gather fills and the forward reads. */
    public DeviceBuffer scratch(long bytes) {
        DeviceBuffer b = device.allocate(bytes);
        scratch.add(b);
        if (device instanceof CudaDevice cuda) {
            // a gather asks for its buffers inside the capture, where a synchronous copy fails
            cuda.zero(b, 0, bytes);
        } else {
            device.copyFromHost(java.nio.ByteBuffer.allocateDirect(Math.toIntExact(bytes)), b, 0);
        }
        return b;
    }

    /** Runs the captured work once. */
    void replay() {
        if (closed) {
            throw new IllegalStateException("step is closed");
        }
        if (graph != null) {
            graph.launch();
        } else {
            for (Runnable op : ops) {
                op.run();
            }
        }
        replays++;
    }

    public Device device() {
        return device;
    }

    public String walk() {
        return walk;
    }

    /** The batch size it was captured for; a smaller batch is padded up to it with slot 0. */
    public int padded() {
        return padded;
    }

    /** 0 or 1: which of the key's two captures this is. */
    public int graphSlot() {
        return graphSlot;
    }

    /** The upload the replay reads (layout in {@code ResidentUpload}): counts, slots, the plan's runs. */
    public DeviceBuffer upload() {
        return upload;
    }

    /** int32 per row: the token the forward sampled (negative: unusable logits). */
    public DeviceBuffer sampled() {
        return sampled;
    }

    /** The recorded work by resource key, in record order. */
    public Map<String, List<Runnable>> streams() {
        Map<String, List<Runnable>> view = new LinkedHashMap<>();
        streams.forEach((k, v) -> view.put(k, Collections.unmodifiableList(v)));
        return Collections.unmodifiableMap(view);
    }

    /** Whether the step's attention reads its pages off the resident tables. */
    public boolean readsTables() {
        return readsTables;
    }

    public void readsTables(boolean value) {
        readsTables = value;
    }

    /** Whether the step's attention reads a plan the host made for it (staged with the writes). */
    public boolean hostPlanned() {
        return hostPlanned;
    }

    public void hostPlanned(boolean value) {
        hostPlanned = value;
    }

    /** Device bytes it holds. */
    long heldBytes() {
        return upload.nbytes() + sampled.nbytes() + scratch.stream().mapToLong(DeviceBuffer::nbytes).sum();
    }

    public long replays() {
        return replays;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (graph != null) {
            graph.close();
        }
        scratch.forEach(device::free);
        device.free(sampled);
        device.free(upload);
    }
}
