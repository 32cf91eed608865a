package io.mstar.tensor.device.cuda;

import jcuda.driver.CUevent;
import jcuda.driver.CUresult;

import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

/**
 * A point in the device's stream: complete once every operation issued before it has finished. Used to time
 * device work and to publish a descriptor only after the work producing its bytes has completed. Owned by the
 * device's owner thread; closed by whoever recorded it.
 */
public final class CudaEvent implements AutoCloseable {

    private final CudaDevice device;
    private final CUevent event;
    private boolean closed;

    CudaEvent(CudaDevice device, CUevent event) {
        this.device = device;
        this.event = event;
    }

    /** True once the work before the event has completed; never blocks. */
    public boolean isComplete() {
        device.bind();
        int r = cuEventQuery(event);
        if (r == CUresult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        device.check(r, "cuEventQuery");
        return true;
    }

    /** Blocks until the work before the event has completed. */
    public void synchronize() {
        device.bind();
        device.check(cuEventSynchronize(event), "cuEventSynchronize");
    }

    /** Device time from {@code earlier} to this event, in milliseconds (about 0.5 µs resolution). */
    public float elapsedMillisSince(CudaEvent earlier) {
        device.bind();
        float[] ms = new float[1];
        device.check(cuEventElapsedTime(ms, earlier.event, event), "cuEventElapsedTime");
        return ms[0];
    }

    CUevent handle() {
        return event;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            device.bind();
            device.check(cuEventDestroy(event), "cuEventDestroy");
        }
    }
}
