package io.mstar.worker.engine;

/** Where a worker keeps tensors and runs kernels ({@code mstar.worker.device}). */
public enum DeviceChoice {
    /** A GPU when the CUDA driver sees one, else host memory. */
    AUTO,
    /** Host memory, even when a GPU is present. */
    HOST,
    /** GPU 0; start-up fails when the driver sees none. */
    CUDA
}
