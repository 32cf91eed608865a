// Kernels of the minilm-embed encoder (all-MiniLM-L6-v2, a BERT), loaded as PTX by MiniLmCudaKernels. Each has
// a plain-Java twin in MiniLmHostKernels that the gpu-tagged tests compare it with. Built by nvcc -ptx
// -arch=compute_90 at build time; a build without nvcc has none.
//
// Every parameter is 64 bits wide so the host passes plain longs (CudaDevice.launch): pointers as addresses,
// counts as integers, floats as their bit pattern in the low 32 bits. Launches are one-dimensional; kernels that
// need two dimensions decode blockIdx.x themselves. Activations are token-major [rows, width] float32, rows =
// batch * length of a right-padded batch whose lengths[b] say which rows are real.

#include <cuda_bf16.h>

typedef unsigned long long u64;

// Writes v to out16[i] as BF16 when the caller asked for a BF16 copy (the next product's operand), else nothing.
__device__ __forceinline__ void storeBf16(u64 out16Ptr, u64 i, float v) {
    if (out16Ptr) {
        reinterpret_cast<__nv_bfloat16 *>(out16Ptr)[i] = __float2bfloat16_rn(v);
    }
}

__device__ __forceinline__ float bitsToFloat(u64 bits) {
    return __int_as_float((int)(unsigned int)bits);
}

// out[r, c] = word[ids[r], c] + position[r % length, c] + tokenType[c], for r < rows, c < hidden.
extern "C" __global__ void minilm_embeddings(u64 idsPtr, u64 rows, u64 length, u64 hidden, u64 wordPtr,
                                             u64 positionPtr, u64 typePtr, u64 outPtr) {
    const int *ids = reinterpret_cast<const int *>(idsPtr);
    const float *word = reinterpret_cast<const float *>(wordPtr);
    const float *position = reinterpret_cast<const float *>(positionPtr);
    const float *type = reinterpret_cast<const float *>(typePtr);
    float *out = reinterpret_cast<float *>(outPtr);
    u64 total = rows * hidden;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x) {
        u64 r = i / hidden;
        u64 c = i % hidden;
        out[i] = word[(u64)ids[r] * hidden + c] + position[(r % length) * hidden + c] + type[c];
    }
}

// Tiled SGEMM with fused bias and optional GELU: out[m, n] = sum_k a[m, k] * w[k, n] + bias[n].
// Tiles of 128 x 64 outputs per block of 256 threads, 8 x 4 outputs per thread in registers (3 vector loads from
// shared memory per 32 FMAs), the reduction in slices of 16 staged through shared memory. Block b covers tile
// (b / tilesN, b % tilesN). Any m, n, k: out-of-range operands load as zeros and out-of-range outputs are skipped.
#define GEMM_BM 128
#define GEMM_BN 64
#define GEMM_BK 16
#define GEMM_TM 8
#define GEMM_TN 4
extern "C" __global__ void __launch_bounds__(256) minilm_gemm_bias(u64 aPtr, u64 wPtr, u64 biasPtr, u64 outPtr,
                                                                  u64 mArg, u64 nArg, u64 kArg, u64 gelu) {
    const float *a = reinterpret_cast<const float *>(aPtr);
    const float *w = reinterpret_cast<const float *>(wPtr);
    const float *bias = reinterpret_cast<const float *>(biasPtr);
    float *out = reinterpret_cast<float *>(outPtr);
    int m = (int)mArg, n = (int)nArg, k = (int)kArg;
    int tilesN = (n + GEMM_BN - 1) / GEMM_BN;
    int row0 = (blockIdx.x / tilesN) * GEMM_BM;
    int col0 = (blockIdx.x % tilesN) * GEMM_BN;

    // As is stored k-major so each thread reads its 8 rows as two float4s; the +4 padding keeps those 16-byte
    // aligned while spreading one row's k-major stores over different banks
    __shared__ __align__(16) float As[GEMM_BK][GEMM_BM + 4];
    __shared__ __align__(16) float Bs[GEMM_BK][GEMM_BN];
    int tid = threadIdx.x;
    int tr = (tid / 16) * GEMM_TM;  // this thread's first row in the tile: 0, 8, .., 120
    int tc = (tid % 16) * GEMM_TN;  // this thread's first column in the tile: 0, 4, .., 60
    float acc[GEMM_TM][GEMM_TN] = {};

    for (int k0 = 0; k0 < k; k0 += GEMM_BK) {
        // 128 x 16 of a (8 per thread) and 16 x 64 of w (4 per thread); consecutive threads read consecutive k
        // of a row of a, and consecutive columns of a row of w
        for (int i = tid; i < GEMM_BM * GEMM_BK; i += 256) {
            int r = i / GEMM_BK, kk = i % GEMM_BK;
            int gr = row0 + r, gk = k0 + kk;
            As[kk][r] = (gr < m && gk < k) ? a[(u64)gr * k + gk] : 0.f;
        }
        for (int i = tid; i < GEMM_BK * GEMM_BN; i += 256) {
            int kk = i / GEMM_BN, c = i % GEMM_BN;
            int gk = k0 + kk, gc = col0 + c;
            Bs[kk][c] = (gk < k && gc < n) ? w[(u64)gk * n + gc] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; kk++) {
            float4 a0 = *reinterpret_cast<const float4 *>(&As[kk][tr]);
            float4 a1 = *reinterpret_cast<const float4 *>(&As[kk][tr + 4]);
            float4 b0 = *reinterpret_cast<const float4 *>(&Bs[kk][tc]);
            float av[GEMM_TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float bv[GEMM_TN] = {b0.x, b0.y, b0.z, b0.w};
#pragma unroll
            for (int i = 0; i < GEMM_TM; i++) {
#pragma unroll
                for (int j = 0; j < GEMM_TN; j++) {
                    acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < GEMM_TM; i++) {
        int gr = row0 + tr + i;
        if (gr >= m) {
            continue;
        }
#pragma unroll
        for (int j = 0; j < GEMM_TN; j++) {
            int gc = col0 + tc + j;
            if (gc < n) {
                float v = acc[i][j] + bias[gc];
                if (gelu) {
                    v = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
                }
                out[(u64)gr * n + gc] = v;
            }
        }
    }
}

__device__ __forceinline__ float biasGelu(float v, float bias, u64 gelu) {
    v += bias;
    return gelu ? 0.5f * v * (1.f + erff(v * 0.70710678118654752f)) : v;
}

// The epilogue of a cuBLAS product: out[r, c] += bias[c], then GELU when asked, in place; or, when out16 is not 0,
// into out16 as BF16 only (the BF16 encoder reads nothing else, and the FP32 write was a third of the pass's bytes). Same arithmetic as minilm_gemm_bias's epilogue. rows * n < 2^31, so indices are 32-bit; when n
// is a multiple of 4 each thread takes four neighbours at a time (this pass is bound by memory, not arithmetic).
extern "C" __global__ void minilm_bias_act(u64 outPtr, u64 biasPtr, u64 rows, u64 nArg, u64 gelu, u64 out16Ptr) {
    unsigned n = (unsigned)nArg;
    unsigned step = gridDim.x * blockDim.x;
    if (n % 4 != 0) {
        float *out = reinterpret_cast<float *>(outPtr);
        const float *bias = reinterpret_cast<const float *>(biasPtr);
        unsigned total = (unsigned)rows * n;
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
            float v = biasGelu(out[i], bias[i % n], gelu);
            if (out16Ptr) {
                storeBf16(out16Ptr, i, v);
            } else {
                out[i] = v;
            }
        }
        return;
    }
    float4 *out = reinterpret_cast<float4 *>(outPtr);
    const float4 *bias = reinterpret_cast<const float4 *>(biasPtr);
    unsigned quads = n / 4;
    unsigned total = (unsigned)rows * quads;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        float4 v = out[i];
        float4 b = bias[i % quads];
        v.x = biasGelu(v.x, b.x, gelu);
        v.y = biasGelu(v.y, b.y, gelu);
        v.z = biasGelu(v.z, b.z, gelu);
        v.w = biasGelu(v.w, b.w, gelu);
        if (out16Ptr) {
            __nv_bfloat162 *o = reinterpret_cast<__nv_bfloat162 *>(out16Ptr) + 2 * (u64)i;
            o[0] = __floats2bfloat162_rn(v.x, v.y);
            o[1] = __floats2bfloat162_rn(v.z, v.w);
        } else {
            out[i] = v;
        }
    }
}

// Sum of v over the block (blockDim a multiple of 32, at most 1024); every thread gets the result.
__device__ float blockSum(float v, float *scratch) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, o);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // scratch may still be read by a previous call
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    int warps = (blockDim.x + 31) >> 5;
    float total = 0.f;
    for (int i = 0; i < warps; i++) {
        total += scratch[i];
    }
    return total;
}

// out[r] = LayerNorm(x[r] + residual[r]) * gamma + beta; one block per row, width <= 1024. residual may be 0;
// out may be x or residual (each row is read into shared memory before it is written); a BF16 copy of out too
// when out16 is not 0.
extern "C" __global__ void minilm_add_layer_norm(u64 xPtr, u64 residualPtr, u64 gammaPtr, u64 betaPtr, u64 outPtr,
                                                 u64 width, u64 epsBits, u64 out16Ptr) {
    __shared__ float row[1024];
    __shared__ float scratch[32];
    const float *x = reinterpret_cast<const float *>(xPtr);
    const float *residual = reinterpret_cast<const float *>(residualPtr);
    const float *gamma = reinterpret_cast<const float *>(gammaPtr);
    const float *beta = reinterpret_cast<const float *>(betaPtr);
    float *out = reinterpret_cast<float *>(outPtr);
    int w = (int)width;
    u64 base = (u64)blockIdx.x * w;
    float sum = 0.f;
    for (int c = threadIdx.x; c < w; c += blockDim.x) {
        float v = x[base + c] + (residualPtr ? residual[base + c] : 0.f);
        row[c] = v;
        sum += v;
    }
    float mean = blockSum(sum, scratch) / w;
    float var = 0.f;
    for (int c = threadIdx.x; c < w; c += blockDim.x) {
        float d = row[c] - mean;
        var += d * d;
    }
    var = blockSum(var, scratch) / w;
    float inv = rsqrtf(var + bitsToFloat(epsBits));
    for (int c = threadIdx.x; c < w; c += blockDim.x) {
        float v = (row[c] - mean) * inv * gamma[c] + beta[c];
        out[base + c] = v;
        storeBf16(out16Ptr, base + c, v);
    }
}

// Multi-head self-attention over qkv [rows, 3 * hidden] (query | key | value, heads slices of headDim each) into
// out [rows, hidden]: softmax(q k^T / sqrt(headDim)) v over the sentence's real tokens only, and a BF16 copy when
// out16 is not 0. One block per 16 query rows of one head of one sentence (4 warps of 4 rows); the keys and values
// pass through shared memory in coalesced tiles of 32, each folded into a running max and sum (online softmax), so
// any length takes the same shared memory. Lane j scores key j of a tile for the warp's 4 rows at once, and lane d
// accumulates column d of all 4 rows, so each shared-memory read feeds 4 FMAs. headDim is a multiple of 4, at most
// 128. Block b covers query rows 16 * (b % qBlocks) .. of head (b / qBlocks) % heads of sentence b / (qBlocks * heads).
#define ATT_WARPS 4
#define ATT_ROWS 4
#define ATT_TILE 32
#define ATT_MAXDIM 128
#define ATT_COLS (ATT_MAXDIM / 32)
extern "C" __global__ void __launch_bounds__(128) minilm_attention(u64 qkvPtr, u64 lengthsPtr, u64 lengthArg,
                                                                  u64 headsArg, u64 headDimArg, u64 scaleBits,
                                                                  u64 outPtr, u64 out16Ptr) {
    // +4: lane j reads row j as float4s, so the 8 lanes of each quarter-warp phase start in different banks
    __shared__ __align__(16) float keys[ATT_TILE][ATT_MAXDIM + 4];
    __shared__ __align__(16) float values[ATT_TILE][ATT_MAXDIM];
    __shared__ __align__(16) float queries[ATT_WARPS][ATT_ROWS][ATT_MAXDIM];
    const float *qkv = reinterpret_cast<const float *>(qkvPtr);
    const int *lengths = reinterpret_cast<const int *>(lengthsPtr);
    float *out = reinterpret_cast<float *>(outPtr);
    int length = (int)lengthArg, heads = (int)headsArg, headDim = (int)headDimArg;
    int hidden = heads * headDim;
    int stride = 3 * hidden;
    int quads = headDim / 4;
    float scale = bitsToFloat(scaleBits);
    int qBlocks = (length + ATT_WARPS * ATT_ROWS - 1) / (ATT_WARPS * ATT_ROWS);
    int b = blockIdx.x / (qBlocks * heads);
    int h = (blockIdx.x / qBlocks) % heads;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int firstRow = (blockIdx.x % qBlocks) * ATT_WARPS * ATT_ROWS + warp * ATT_ROWS;
    int len = lengths[b];
    u64 rowBase = (u64)b * length;
#pragma unroll
    for (int r = 0; r < ATT_ROWS; r++) {
        int i = firstRow + r;
        for (int d = lane; d < headDim; d += 32) {
            queries[warp][r][d] = i < length ? qkv[(rowBase + i) * stride + h * headDim + d] * scale : 0.f;
        }
    }
    float max[ATT_ROWS], sum[ATT_ROWS], acc[ATT_ROWS][ATT_COLS];
#pragma unroll
    for (int r = 0; r < ATT_ROWS; r++) {
        max[r] = -INFINITY;
        sum[r] = 0.f;
#pragma unroll
        for (int c = 0; c < ATT_COLS; c++) {
            acc[r][c] = 0.f;
        }
    }
    // rows past the sentence's end run along (every thread takes part in the barriers) and are not written
    for (int j0 = 0; j0 < len; j0 += ATT_TILE) {
        __syncthreads();  // the previous tile is consumed; the first time, the queries are in place
        for (int e = threadIdx.x; e < ATT_TILE * quads; e += blockDim.x) {
            int j = e / quads, d = 4 * (e % quads);
            float4 k = make_float4(0.f, 0.f, 0.f, 0.f), v = k;
            if (j0 + j < len) {
                const float *kv = qkv + (rowBase + j0 + j) * stride + hidden + h * headDim + d;
                k = *reinterpret_cast<const float4 *>(kv);
                v = *reinterpret_cast<const float4 *>(kv + hidden);
            }
            *reinterpret_cast<float4 *>(&keys[j][d]) = k;
            *reinterpret_cast<float4 *>(&values[j][d]) = v;
        }
        __syncthreads();
        bool real = j0 + lane < len;
        float s[ATT_ROWS];
#pragma unroll
        for (int r = 0; r < ATT_ROWS; r++) {
            s[r] = 0.f;
        }
        for (int d = 0; d < headDim; d += 4) {
            float4 k = *reinterpret_cast<const float4 *>(&keys[lane][d]);
#pragma unroll
            for (int r = 0; r < ATT_ROWS; r++) {
                float4 q = *reinterpret_cast<const float4 *>(&queries[warp][r][d]);
                s[r] = fmaf(q.x, k.x, fmaf(q.y, k.y, fmaf(q.z, k.z, fmaf(q.w, k.w, s[r]))));
            }
        }
        float p[ATT_ROWS];
#pragma unroll
        for (int r = 0; r < ATT_ROWS; r++) {
            float score = real ? s[r] : -INFINITY;
            float tileMax = score;
            for (int o = 16; o > 0; o >>= 1) {
                tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, o));
            }
            float next = fmaxf(max[r], tileMax);  // finite: key j0 is real
            p[r] = real ? __expf(score - next) : 0.f;
            float rescale = __expf(max[r] - next);
            float tileSum = p[r];
            for (int o = 16; o > 0; o >>= 1) {
                tileSum += __shfl_xor_sync(0xffffffffu, tileSum, o);
            }
            sum[r] = sum[r] * rescale + tileSum;
            max[r] = next;
#pragma unroll
            for (int c = 0; c < ATT_COLS; c++) {
                acc[r][c] *= rescale;
            }
        }
        for (int j = 0; j < ATT_TILE; j++) {
            float pj[ATT_ROWS];
#pragma unroll
            for (int r = 0; r < ATT_ROWS; r++) {
                pj[r] = __shfl_sync(0xffffffffu, p[r], j);
            }
#pragma unroll
            for (int c = 0; c < ATT_COLS; c++) {
                int d = lane + 32 * c;
                if (d < headDim) {
                    float v = values[j][d];
#pragma unroll
                    for (int r = 0; r < ATT_ROWS; r++) {
                        acc[r][c] = fmaf(pj[r], v, acc[r][c]);
                    }
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ATT_ROWS; r++) {
        int i = firstRow + r;
        if (i < length) {
            float inv = 1.f / sum[r];
#pragma unroll
            for (int c = 0; c < ATT_COLS; c++) {
                int d = lane + 32 * c;
                if (d < headDim) {
                    u64 at = (rowBase + i) * hidden + h * headDim + d;
                    out[at] = acc[r][c] * inv;
                    storeBf16(out16Ptr, at, acc[r][c] * inv);
                }
            }
        }
    }
}

// out[b] = normalize(mean of hidden rows 0 .. lengths[b]-1 of sentence b); one block per sentence.
extern "C" __global__ void minilm_mean_pool_normalize(u64 hiddenPtr, u64 lengthsPtr, u64 lengthArg, u64 widthArg,
                                                      u64 outPtr) {
    __shared__ float scratch[32];
    const float *hidden = reinterpret_cast<const float *>(hiddenPtr);
    const int *lengths = reinterpret_cast<const int *>(lengthsPtr);
    float *out = reinterpret_cast<float *>(outPtr);
    int length = (int)lengthArg, width = (int)widthArg;
    int b = blockIdx.x;
    int len = lengths[b];
    float sq = 0.f;
    // each thread keeps at most 8 columns of the mean (width <= 8 * blockDim)
    float mean[8];
    int n = 0;
    for (int c = threadIdx.x; c < width; c += blockDim.x, n++) {
        float s = 0.f;
        for (int i = 0; i < len; i++) {
            s += hidden[((u64)b * length + i) * width + c];
        }
        mean[n] = s / len;
        sq += mean[n] * mean[n];
    }
    float norm = sqrtf(blockSum(sq, scratch));
    float inv = 1.f / fmaxf(norm, 1e-12f);
    n = 0;
    for (int c = threadIdx.x; c < width; c += blockDim.x, n++) {
        out[(u64)b * width + c] = mean[n] * inv;
    }
}
