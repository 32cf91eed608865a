package io.mstar.tensor.device.cuda;

import io.mstar.tensor.device.DeviceException;
import io.mstar.tensor.device.DeviceException.Reason;
import jcuda.driver.CUresult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The CUresult → reason table, pinned without a GPU (CUresult is plain Java; no driver is loaded). */
class CudaErrorClassificationTests {

    @Test
    void outOfMemoryFailsOnlyTheRequest() {
        assertThat(CudaErrors.classify(CUresult.CUDA_ERROR_OUT_OF_MEMORY)).isEqualTo(Reason.OUT_OF_MEMORY);
        assertThat(Reason.OUT_OF_MEMORY.isFatal()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(ints = {CUresult.CUDA_ERROR_INVALID_VALUE, CUresult.CUDA_ERROR_INVALID_HANDLE,
            CUresult.CUDA_ERROR_INVALID_DEVICE, CUresult.CUDA_ERROR_INVALID_CONTEXT, CUresult.CUDA_ERROR_INVALID_PTX,
            CUresult.CUDA_ERROR_INVALID_IMAGE, CUresult.CUDA_ERROR_NOT_FOUND,
            CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, CUresult.CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
            CUresult.CUDA_ERROR_NOT_SUPPORTED})
    void badArgumentsAreInvalidArgument(int code) {
        assertThat(CudaErrors.classify(code)).isEqualTo(Reason.INVALID_ARGUMENT);
    }

    @ParameterizedTest
    @ValueSource(ints = {CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE, CUresult.CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
            CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED})
    void launchesRefusedBeforeRunningAreNotFatal(int code) {
        assertThat(CudaErrors.classify(code)).isEqualTo(Reason.LAUNCH_FAILED);
    }

    @ParameterizedTest
    @ValueSource(ints = {CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, CUresult.CUDA_ERROR_LAUNCH_FAILED,
            CUresult.CUDA_ERROR_LAUNCH_TIMEOUT, CUresult.CUDA_ERROR_ASSERT, CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR,
            CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION, CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
            CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE, CUresult.CUDA_ERROR_INVALID_PC,
            CUresult.CUDA_ERROR_ECC_UNCORRECTABLE, CUresult.CUDA_ERROR_NVLINK_UNCORRECTABLE,
            CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED, CUresult.CUDA_ERROR_DEINITIALIZED,
            CUresult.CUDA_ERROR_NOT_INITIALIZED, CUresult.CUDA_ERROR_NO_DEVICE, CUresult.CUDA_ERROR_DEVICE_UNAVAILABLE,
            CUresult.CUDA_ERROR_UNKNOWN, CudaErrors.CUDA_ERROR_CONTAINED, CudaErrors.CUDA_ERROR_TENSOR_MEMORY_LEAK})
    void stickyAndHardwareErrorsAreFatal(int code) {
        assertThat(CudaErrors.classify(code)).isEqualTo(Reason.FATAL);
        assertThat(CudaErrors.classify(code).isFatal()).isTrue();
    }

    @Test
    void aCodeTheTableDoesNotKnowIsTreatedAsFatal() {
        assertThat(CudaErrors.classify(4242)).isEqualTo(Reason.FATAL);
        assertThat(CudaErrors.describe(4242)).isEqualTo("CUresult 4242");
    }

    @Test
    void successIsNoError() {
        assertThatThrownBy(() -> CudaErrors.classify(CUresult.CUDA_SUCCESS)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theExceptionNamesDeviceOperationAndCode() {
        DeviceException e = CudaErrors.toException(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, "cuda:0", "cuStreamSynchronize");
        assertThat(e.reason()).isEqualTo(Reason.FATAL);
        assertThat(e.device()).isEqualTo("cuda:0");
        assertThat(e.getMessage()).contains("cuStreamSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    }
}
