package io.mstar.tensor.device.cuda;

import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;

import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstream;
import jcuda.driver.CUstreamCaptureMode;

/**
 * Work captured once from the device's stream and replayed as one launch ({@link CudaDevice#capture}): the same
 * kernels on the same buffers with the same arguments, so a caller stages its inputs into the buffers the capture
 * used before each {@link #launch()}. Made and replayed under the device's monitor, which also keeps every other
 * thread's work off the stream while it is captured.
 */
public final class CudaGraph implements AutoCloseable {

    private final CudaDevice device;
    private final CUstream stream;
    private final CUgraphExec exec;
    private long launches;
    private boolean closed;

    private CudaGraph(CudaDevice device, CUstream stream, CUgraphExec exec) {
        this.device = device;
        this.stream = stream;
        this.exec = exec;
    }

    /** Called by {@link CudaDevice#capture} under its monitor, with its context current. */
    static CudaGraph capture(CudaDevice device, CUstream stream, Runnable work) {
        // relaxed: the capturing thread may still free into the caching allocator while it records
        device.check(cuStreamBeginCapture(stream, CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
                "cuStreamBeginCapture");
        CUgraph graph = new CUgraph();
        try {
            work.run();
        } catch (RuntimeException e) {
            // end the capture so the stream is usable again; the partial graph is dropped
            if (cuStreamEndCapture(stream, graph) == 0) {
                cuGraphDestroy(graph);
            }
            throw e;
        }
        device.check(cuStreamEndCapture(stream, graph), "cuStreamEndCapture");
        try {
            CUgraphExec exec = new CUgraphExec();
            device.check(cuGraphInstantiate(exec, graph, 0), "cuGraphInstantiate");
            return new CudaGraph(device, stream, exec);
        } finally {
            cuGraphDestroy(graph);
        }
    }

    /** Replays the captured work on the device's stream, asynchronously. */
    public void launch() {
        synchronized (device) {
            if (closed) {
                throw new IllegalStateException("graph is closed");
            }
            device.bind();
            device.check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
            launches++;
        }
    }

    /** How often {@link #launch()} replayed it. */
    public long launches() {
        synchronized (device) {
            return launches;
        }
    }

    /** Destroys the executable graph; idempotent. Work already launched completes. */
    @Override
    public void close() {
        synchronized (device) {
            if (closed) {
                return;
            }
            closed = true;
            device.bind();
            cuGraphExecDestroy(exec);
        }
    }
}
