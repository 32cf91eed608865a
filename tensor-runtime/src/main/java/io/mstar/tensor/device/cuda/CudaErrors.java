package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import jcuda.driver.CUresult;

import java.util.Map;

/**
 * What a {@code CUresult} means for the caller: the {@link Reason} of the {@link DeviceException} it becomes.
 * Pure Java (no driver call), so the table is pinned by tests on machines without a GPU.
 *
 * <p>Sticky errors poison the context: every later call on it fails the same way and only a new process
 * recovers, so they are {@link Reason#FATAL} and the device turns unhealthy. {@code CUDA_ERROR_LAUNCH_FAILED}
 * is sticky too (the driver reports a kernel exception with it). Launch errors that are refused before the
 * kernel runs (too many resources, a cooperative grid too large) leave the context usable:
 * {@link Reason#LAUNCH_FAILED}. A code this table does not know (a newer driver's) is treated as fatal:
 * restarting a worker costs less than running on a context in an unknown state.
 */
final class CudaErrors {

    // Codes newer than JCuda 12.0's CUresult, as CUDA 13's cuda.h numbers them.
    static final int CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225;
    static final int CUDA_ERROR_CONTAINED = 226;
    static final int CUDA_ERROR_NVLINK_ENCRYPTION_FAILED = 227;
    static final int CUDA_ERROR_TENSOR_MEMORY_LEAK = 721;
    static final int CUDA_ERROR_FUNCTION_NOT_LOADED = 913;
    static final int CUDA_ERROR_INVALID_RESOURCE_TYPE = 914;
    static final int CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915;

    private static final Map<Integer, Reason> TABLE = Map.ofEntries(
            // per request: this allocation did not fit, a smaller or later one may
            Map.entry(CUresult.CUDA_ERROR_OUT_OF_MEMORY, Reason.OUT_OF_MEMORY),

            // per request: the caller passed something wrong; the context is fine
            Map.entry(CUresult.CUDA_ERROR_INVALID_VALUE, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_INVALID_HANDLE, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_INVALID_DEVICE, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_INVALID_CONTEXT, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_INVALID_IMAGE, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_INVALID_PTX, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_NOT_FOUND, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_NOT_READY, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_NOT_SUPPORTED, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_NOT_PERMITTED, Reason.INVALID_ARGUMENT),
            Map.entry(CUresult.CUDA_ERROR_ILLEGAL_STATE, Reason.INVALID_ARGUMENT),
            Map.entry(CUDA_ERROR_FUNCTION_NOT_LOADED, Reason.INVALID_ARGUMENT),
            Map.entry(CUDA_ERROR_INVALID_RESOURCE_TYPE, Reason.INVALID_ARGUMENT),
            Map.entry(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, Reason.INVALID_ARGUMENT),

            // per request: refused at launch, before any thread ran; the context is fine
            Map.entry(CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_MERGE, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_UNJOINED, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_ISOLATION, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_CAPTURED_EVENT, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, Reason.LAUNCH_FAILED),
            Map.entry(CUresult.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, Reason.LAUNCH_FAILED),
            Map.entry(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, Reason.LAUNCH_FAILED),

            // fatal: sticky kernel exceptions, hardware errors, a lost or torn-down driver
            Map.entry(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_LAUNCH_FAILED, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_LAUNCH_TIMEOUT, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_ASSERT, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_MISALIGNED_ADDRESS, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_INVALID_PC, Reason.FATAL),
            Map.entry(CUDA_ERROR_TENSOR_MEMORY_LEAK, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_ECC_UNCORRECTABLE, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_NVLINK_UNCORRECTABLE, Reason.FATAL),
            Map.entry(CUDA_ERROR_CONTAINED, Reason.FATAL),
            Map.entry(CUDA_ERROR_NVLINK_ENCRYPTION_FAILED, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_NOT_INITIALIZED, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_DEINITIALIZED, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_NO_DEVICE, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_DEVICE_UNAVAILABLE, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_STUB_LIBRARY, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_SYSTEM_NOT_READY, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_OPERATING_SYSTEM, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_MPS_CONNECTION_FAILED, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_MPS_RPC_FAILURE, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_MPS_SERVER_NOT_READY, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_MPS_CLIENT_TERMINATED, Reason.FATAL),
            Map.entry(CUresult.CUDA_ERROR_UNKNOWN, Reason.FATAL));

    private CudaErrors() {
    }

    /**
     * The reason for a failed call's result; {@code CUDA_SUCCESS} is no failure and is rejected.
     */
    static Reason classify(int result) {
        if (result == CUresult.CUDA_SUCCESS) {
            throw new IllegalArgumentException("CUDA_SUCCESS is not an error");
        }
        return TABLE.getOrDefault(result, Reason.FATAL);
    }

    /** {@code CUDA_ERROR_ILLEGAL_ADDRESS (700)}; codes newer than JCuda's table print as their number. */
    static String describe(int result) {
        String name = CUresult.stringFor(result);
        return name.startsWith("INVALID CUresult") ? "CUresult " + result : name + " (" + result + ")";
    }

    /** The exception a failed call becomes; the caller marks the device unhealthy when it is fatal. */
    static DeviceException toException(int result, String device, String operation) {
        return new DeviceException(classify(result), device, operation + " failed: " + describe(result));
    }
}
