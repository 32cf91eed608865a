package io.mstar.tensor.device.cuda;

import jcuda.driver.CUstream;

/** A {@link CUstream} that tells its handle, so that libraries outside JCuda (cuBLAS) issue on the same stream. */
final class NativeStream extends CUstream {

    long address() {
        return getNativePointer();
    }
}
