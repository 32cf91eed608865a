// Node kernels of the built-in counter model (io.mstar.model.CounterModel), loaded as PTX by
// CounterCudaKernels. Built by nvcc -ptx -arch=compute_90 at build time; a build without nvcc has none.
//
// Every parameter is 64 bits wide so the host passes plain longs (CudaDevice.launch). The model's
// tensors are int32, but the arithmetic is done on unsigned ints: that wraps modulo 2^32 exactly as
// Java's int does, where signed overflow would be undefined behaviour in C++.
//
// Launch shape: one-dimensional, blockDim a multiple of 32 (the host uses 256), grid-stride loops so
// any grid covers any count.

typedef unsigned long long u64;
typedef unsigned int u32;

// dst[i] = src[i] + value; src and dst may be the same buffer. The counter's embed: h = tokens + 1.
extern "C" __global__ void counter_add_scalar_i32(u64 src, u64 dst, u64 value, u64 count) {
    const u32 *in = reinterpret_cast<const u32 *>(src);
    u32 *out = reinterpret_cast<u32 *>(dst);
    u32 v = (u32)value;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
        out[i] = in[i] + v;
    }
}

// dst[i] = src[i] * value; src and dst may be the same buffer. The counter's detok: text = chunk * 10.
extern "C" __global__ void counter_mul_scalar_i32(u64 src, u64 dst, u64 value, u64 count) {
    const u32 *in = reinterpret_cast<const u32 *>(src);
    u32 *out = reinterpret_cast<u32 *>(dst);
    u32 v = (u32)value;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
        out[i] = in[i] * v;
    }
}

// dst[0] = addend[0], or 0 when addend is 0: the starting value counter_sum_accumulate_i32 adds to.
// Launched as one thread on the same stream, so it is ordered before the accumulation.
extern "C" __global__ void counter_sum_init_i32(u64 dst, u64 addend) {
    u32 start = addend == 0 ? 0u : *reinterpret_cast<const u32 *>(addend);
    *reinterpret_cast<u32 *>(dst) = start;
}

// dst[0] += sum(src[0..count)). Each thread sums a grid-stride slice, warps reduce by shuffles, the
// warp sums meet in shared memory, and each block adds its one partial with a single atomic. Integer
// addition modulo 2^32 is associative, so the result does not depend on the order the blocks land in.
// dst must not lie inside src[0..count).
extern "C" __global__ void counter_sum_accumulate_i32(u64 src, u64 dst, u64 count) {
    __shared__ u32 warpSums[32];
    const u32 *in = reinterpret_cast<const u32 *>(src);
    u32 acc = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
        acc += in[i];
    }
    // every thread of the block reaches here (no early exit), so full-mask shuffles are safe
    for (int offset = 16; offset > 0; offset >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    u32 lane = threadIdx.x & 31u;
    u32 warp = threadIdx.x >> 5;
    if (lane == 0) {
        warpSums[warp] = acc;
    }
    __syncthreads();
    if (warp == 0) {
        u32 warps = (blockDim.x + 31u) >> 5;
        acc = lane < warps ? warpSums[lane] : 0u;
        for (int offset = 16; offset > 0; offset >>= 1) {
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        }
        if (lane == 0 && acc != 0u) {
            atomicAdd(reinterpret_cast<u32 *>(dst), acc);
        }
    }
}

// next[0] = state[0] + 1; finished[0] = 1 when next[0] == stopAt, else 0. One thread. state and next
// may be the same buffer (the loop-back edge). The counter's step with its data-dependent stop.
extern "C" __global__ void counter_step_i32(u64 state, u64 next, u64 stopAt, u64 finished) {
    u32 v = *reinterpret_cast<const u32 *>(state) + 1u;
    *reinterpret_cast<u32 *>(next) = v;
    *reinterpret_cast<u32 *>(finished) = v == (u32)stopAt ? 1u : 0u;
}
