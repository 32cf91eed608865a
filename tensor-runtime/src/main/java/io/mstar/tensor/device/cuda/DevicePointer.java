package io.mstar.tensor.device.cuda;

import jcuda.driver.CUdeviceptr;

/** A {@link CUdeviceptr} that tells its numeric address, which JCuda keeps protected. */
final class DevicePointer extends CUdeviceptr {

    long address() {
        return getNativePointer();
    }
}
