// Kernels of the minilm-embed encoder (all-MiniLM-L6-v2, a BERT), loaded as PTX by MiniLmCudaKernels. Each has
// a plain-Java twin in MiniLmHostKernels that the gpu-tagged tests compare it with. Built by nvcc -ptx
// -arch=compute_90 at build time; a build without nvcc has none.
//
// Every parameter is 64 bits wide so the host passes plain longs (CudaDevice.launch): pointers as addresses,
// counts as integers, floats as their bit pattern in the low 32 bits. Launches are one-dimensional; kernels that
// need two dimensions decode blockIdx.x themselves. Activations are token-major [rows, width] float32, rows =
// batch * length of a right-padded batch whose lengths[b] say which rows are real.

typedef unsigned long long u64;

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
// out may be x or residual (each row is read into shared memory before it is written).
extern "C" __global__ void minilm_add_layer_norm(u64 xPtr, u64 residualPtr, u64 gammaPtr, u64 betaPtr, u64 outPtr,
                                                 u64 width, u64 epsBits) {
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
        out[base + c] = (row[c] - mean) * inv * gamma[c] + beta[c];
    }
}

// Multi-head self-attention over qkv [rows, 3 * hidden] (query | key | value, heads slices of headDim each) into
// out [rows, hidden]: softmax(q k^T / sqrt(headDim)) v over the sentence's real tokens only. One warp per query
// row, 4 warps per block; block b covers rows 4 * (b % qBlocks) .. of head (b / qBlocks) % heads of sentence
// b / (qBlocks * heads). length <= 512.
#define ATT_WARPS 4
#define ATT_MAXLEN 512
extern "C" __global__ void __launch_bounds__(128) minilm_attention(u64 qkvPtr, u64 lengthsPtr, u64 lengthArg,
                                                                  u64 headsArg, u64 headDimArg, u64 scaleBits,
                                                                  u64 outPtr) {
    __shared__ float scores[ATT_WARPS][ATT_MAXLEN];
    __shared__ float query[ATT_WARPS][128];
    const float *qkv = reinterpret_cast<const float *>(qkvPtr);
    const int *lengths = reinterpret_cast<const int *>(lengthsPtr);
    float *out = reinterpret_cast<float *>(outPtr);
    int length = (int)lengthArg, heads = (int)headsArg, headDim = (int)headDimArg;
    int hidden = heads * headDim;
    int stride = 3 * hidden;
    float scale = bitsToFloat(scaleBits);
    int qBlocks = (length + ATT_WARPS - 1) / ATT_WARPS;
    int b = blockIdx.x / (qBlocks * heads);
    int h = (blockIdx.x / qBlocks) % heads;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int i = (blockIdx.x % qBlocks) * ATT_WARPS + warp;
    if (i >= length) {
        return;  // whole warp leaves together; no block-wide barrier follows
    }
    int len = lengths[b];
    u64 rowBase = (u64)b * length;
    const float *q = qkv + (rowBase + i) * stride + h * headDim;
    for (int d = lane; d < headDim; d += 32) {
        query[warp][d] = q[d];
    }
    __syncwarp();
    float max = -INFINITY;
    for (int j = lane; j < len; j += 32) {
        const float *kr = qkv + (rowBase + j) * stride + hidden + h * headDim;
        float s = 0.f;
        for (int d = 0; d < headDim; d++) {
            s = fmaf(query[warp][d], kr[d], s);
        }
        s *= scale;
        scores[warp][j] = s;
        max = fmaxf(max, s);
    }
    for (int o = 16; o > 0; o >>= 1) {
        max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, o));
    }
    float sum = 0.f;
    for (int j = lane; j < len; j += 32) {
        float p = __expf(scores[warp][j] - max);
        scores[warp][j] = p;
        sum += p;
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    }
    __syncwarp();
    float inv = 1.f / sum;
    for (int d = lane; d < headDim; d += 32) {
        float acc = 0.f;
        const float *v = qkv + rowBase * stride + 2 * hidden + h * headDim + d;
        for (int j = 0; j < len; j++) {
            acc = fmaf(scores[warp][j], v[(u64)j * stride], acc);
        }
        out[(rowBase + i) * hidden + h * headDim + d] = acc * inv;
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
