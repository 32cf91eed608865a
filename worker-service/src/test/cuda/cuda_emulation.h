// CPU emulation of CUDA thread blocks for kernels without a GPU: one std::thread per CUDA thread, __syncthreads and
// __syncwarp as real barriers, warp shuffles through a shared slot array, __shared__ as function statics (blocks
// run one at a time). It checks a kernel's index math and synchronisation, not speed or CUDA limits.
#include <thread>
#include <barrier>
#include <vector>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
struct D3 { unsigned x = 0; };
thread_local D3 threadIdx, blockIdx;
D3 blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
static std::unique_ptr<std::barrier<>> blockBarrier;
static std::vector<std::unique_ptr<std::barrier<>>> warpBarriers;
static float shfl[1024];
inline void __syncthreads() { blockBarrier->arrive_and_wait(); }
inline void __syncwarp() { warpBarriers[threadIdx.x / 32]->arrive_and_wait(); }
inline float __shfl_down_sync(unsigned, float v, int off) {
    int lane = threadIdx.x & 31, base = threadIdx.x - lane;
    shfl[threadIdx.x] = v; __syncwarp();
    float r = lane + off < 32 ? shfl[base + lane + off] : v; __syncwarp();
    return r;
}
inline float __shfl_xor_sync(unsigned, float v, int off) {
    int lane = threadIdx.x & 31, base = threadIdx.x - lane;
    shfl[threadIdx.x] = v; __syncwarp();
    float r = shfl[base + (lane ^ off)]; __syncwarp();
    return r;
}
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline void __threadfence_block() {}
template <typename F, typename... A> void launch(F f, unsigned grid, unsigned block, A... args) {
    gridDim.x = grid; blockDim.x = block;
    for (unsigned b = 0; b < grid; b++) {
        blockBarrier = std::make_unique<std::barrier<>>(block);
        warpBarriers.clear();
        for (unsigned w = 0; w < block / 32; w++) warpBarriers.push_back(std::make_unique<std::barrier<>>(32));
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < block; t++) ts.emplace_back([=] { threadIdx.x = t; blockIdx.x = b; f(args...); });
        for (auto &t : ts) t.join();
    }
}
