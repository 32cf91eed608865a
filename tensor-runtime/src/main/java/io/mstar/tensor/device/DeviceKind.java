package io.mstar.tensor.device;

/** Where a device's memory lives. */
public enum DeviceKind {
    HOST,
    CUDA
}
