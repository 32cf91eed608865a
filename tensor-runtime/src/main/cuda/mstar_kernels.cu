// Kernels CudaDevice loads as PTX (built by nvcc -ptx -arch=compute_90 at build time; the build skips
// this file when nvcc is absent). Every parameter is 64 bits wide so the host side passes plain longs.

extern "C" __global__ void mstar_fill_u32(unsigned long long dst, unsigned long long value,
                                          unsigned long long count) {
    unsigned int *p = reinterpret_cast<unsigned int *>(dst);
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        p[i] = (unsigned int)value;
    }
}

extern "C" __global__ void mstar_scale_f32(unsigned long long data, unsigned long long factorBits,
                                           unsigned long long count) {
    float *p = reinterpret_cast<float *>(data);
    float factor = __int_as_float((int)factorBits);
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        p[i] *= factor;
    }
}

// Writes one word at an arbitrary address: with an unmapped address it raises the sticky
// CUDA_ERROR_ILLEGAL_ADDRESS the FATAL-path test needs. Never used outside tests.
extern "C" __global__ void mstar_poke_u32(unsigned long long address, unsigned long long value) {
    *reinterpret_cast<volatile unsigned int *>(address) = (unsigned int)value;
}

// A batch of small copies (CudaDevice's copyToHost/copyFromHost of a list, BatchCopies): the batch starts with one
// header entry per copy, three 64-bit words (device address, offset of its bytes from the batch's start, length);
// one block per entry copies its bytes, so the whole batch is one upload, one launch and, for a gather, one download.
extern "C" __global__ void mstar_scatter_bytes(unsigned long long batch, unsigned long long count) {
    const unsigned long long *header = reinterpret_cast<const unsigned long long *>(batch);
    for (unsigned long long e = blockIdx.x; e < count; e += gridDim.x) {
        unsigned char *dst = reinterpret_cast<unsigned char *>(header[3 * e]);
        const unsigned char *src = reinterpret_cast<const unsigned char *>(batch + header[3 * e + 1]);
        unsigned long long n = header[3 * e + 2];
        for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) {
            dst[i] = src[i];
        }
    }
}

extern "C" __global__ void mstar_gather_bytes(unsigned long long batch, unsigned long long count) {
    const unsigned long long *header = reinterpret_cast<const unsigned long long *>(batch);
    for (unsigned long long e = blockIdx.x; e < count; e += gridDim.x) {
        const unsigned char *src = reinterpret_cast<const unsigned char *>(header[3 * e]);
        unsigned char *dst = reinterpret_cast<unsigned char *>(batch + header[3 * e + 1]);
        unsigned long long n = header[3 * e + 2];
        for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) {
            dst[i] = src[i];
        }
    }
}
