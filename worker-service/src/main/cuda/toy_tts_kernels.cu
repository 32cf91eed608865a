// The toy-tts language model (io.mstar.model.ToyTtsModel, docs/toy-tts.md) on a GPU, loaded as PTX by
// io.mstar.worker.kernel.tts.cuda.CudaLmBackend. Built by nvcc -ptx -arch=compute_90 at build time.
//
// The same function as the Java reference (HostLmBackend): per token, per layer, RMSNorm, Q/K/V, RoPE,
// causal softmax attention over the request's paged KV cache, output projection, RMSNorm, SiLU MLP; then
// the final RMSNorm and the output head plus the per-byte prior. Only float rounding differs (summation
// order, expf/cosf/sinf); docs/toy-tts.md states the tolerance.
//
// Launch: one block of TTS_MAX_THREADS threads per job (request); a job feeds its tokens one after the other,
// each attending to every earlier position and itself, so prefill and decode are the same kernel. Every
// parameter is 64 bits wide so the host passes plain longs (CudaDevice.launch).

typedef unsigned long long u64;

#define TTS_D 64
#define TTS_LAYERS 2
#define TTS_HEADS 4
#define TTS_HEAD_DIM 16
#define TTS_FFN 128
#define TTS_VOCAB 258
#define TTS_THREADS 128
// toy_tts_forward's block: more threads split the attention over positions (a multiple of TTS_HEAD_DIM and of 32)
#define TTS_MAX_THREADS 512
// Positions a job may attend over: the scores of one head live in shared memory.
#define TTS_MAX_POSITIONS 8192
#define TTS_NORM_EPS 1e-5f
#define TTS_LOGIT_SCALE 3.0f

// The weights' flat layout, exactly ToyTtsWeights.layout(); toy_tts_layout_total lets the host check it.
#define TTS_EMBEDDING 0
#define TTS_LAYER0 (TTS_VOCAB * TTS_D)
#define TTS_LAYER_SIZE (TTS_D + 4 * TTS_D * TTS_D + TTS_D + TTS_D * TTS_FFN + TTS_FFN * TTS_D)
#define TTS_ATTN_NORM(l) (TTS_LAYER0 + (l) * TTS_LAYER_SIZE)
#define TTS_WQ(l) (TTS_ATTN_NORM(l) + TTS_D)
#define TTS_WK(l) (TTS_WQ(l) + TTS_D * TTS_D)
#define TTS_WV(l) (TTS_WK(l) + TTS_D * TTS_D)
#define TTS_WO(l) (TTS_WV(l) + TTS_D * TTS_D)
#define TTS_MLP_NORM(l) (TTS_WO(l) + TTS_D * TTS_D)
#define TTS_W1(l) (TTS_MLP_NORM(l) + TTS_D)
#define TTS_W2(l) (TTS_W1(l) + TTS_D * TTS_FFN)
#define TTS_FINAL_NORM (TTS_LAYER0 + TTS_LAYERS * TTS_LAYER_SIZE)
#define TTS_HEAD (TTS_FINAL_NORM + TTS_D)
#define TTS_PRIOR (TTS_HEAD + TTS_D * TTS_VOCAB)
#define TTS_INV_FREQ (TTS_PRIOR + TTS_VOCAB)
#define TTS_TOTAL (TTS_INV_FREQ + TTS_HEAD_DIM / 2)

// Floats of one token's slot: every layer's K then V.
#define TTS_SLOT_FLOATS (TTS_LAYERS * 2 * TTS_D)
// Ints per job in the job table: token offset, token count, first position, page-table offset, logits row (-1: none).
#define TTS_JOB_INTS 5

extern "C" __global__ void toy_tts_layout_total(u64 out) {
    *reinterpret_cast<long long *>(out) = TTS_TOTAL;
}

// Sum of v over the block; every thread gets it. scratch holds 32 floats; ends synchronized.
__device__ float tts_block_sum(float v, float *scratch) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffff, v, o);
    }
    int warp = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    float total = 0.f;
    for (int w = 0; w < blockDim.x / 32; w++) {
        total += scratch[w];
    }
    __syncthreads();
    return total;
}

__device__ float tts_block_max(float v, float *scratch) {
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    }
    int warp = threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    float m = -INFINITY;
    for (int w = 0; w < blockDim.x / 32; w++) {
        m = fmaxf(m, scratch[w]);
    }
    __syncthreads();
    return m;
}

// out = x / sqrt(mean(x^2) + eps) * gain, over TTS_D values.
__device__ void tts_rmsnorm(const float *x, const float *gain, float *out, float *scratch) {
    float part = threadIdx.x < TTS_D ? x[threadIdx.x] * x[threadIdx.x] : 0.f;
    float ss = tts_block_sum(part, scratch);
    float inv = 1.0f / sqrtf(ss / TTS_D + TTS_NORM_EPS);
    if (threadIdx.x < TTS_D) {
        out[threadIdx.x] = x[threadIdx.x] * inv * gain[threadIdx.x];
    }
    __syncthreads();
}

// out[c] (+)= sum_r in[r] * m[r * cols + c]; adjacent threads read adjacent columns.
__device__ void tts_matvec(const float *in, int rows, const float *m, int cols, float *out, bool accumulate) {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float s = 0.f;
        for (int r = 0; r < rows; r++) {
            s += in[r] * m[r * cols + c];
        }
        out[c] = accumulate ? out[c] + s : s;
    }
    __syncthreads();
}

__device__ void tts_rope(float *v, const float *invFreq, int pos) {
    int half = TTS_HEAD_DIM / 2;
    for (int t = threadIdx.x; t < TTS_HEADS * half; t += blockDim.x) {
        int head = t / half;
        int i = t % half;
        float angle = pos * invFreq[i];
        float c = cosf(angle);
        float s = sinf(angle);
        int a = head * TTS_HEAD_DIM + 2 * i;
        float x0 = v[a];
        float x1 = v[a + 1];
        v[a] = x0 * c - x1 * s;
        v[a + 1] = x0 * s + x1 * c;
    }
    __syncthreads();
}

__device__ float *tts_slot(char *pool, const int *pages, int pos, int pageSize) {
    // 32-bit division: a 64-bit one per position was a large share of the attention's time
    u64 page = (u64)pages[pos / pageSize];
    u64 slot = (u64)(pos % pageSize);
    u64 bytesPerToken = TTS_SLOT_FLOATS * sizeof(float);
    return reinterpret_cast<float *>(pool + page * pageSize * bytesPerToken + slot * bytesPerToken);
}

// One block per job. jobs: TTS_JOB_INTS ints per job; tokens and pageTables: the jobs' ids and page tables
// concatenated; logits: rows of TTS_VOCAB floats for the jobs that want them.
extern "C" __global__ void toy_tts_forward(u64 weightsAddr, u64 poolAddr, u64 jobsAddr, u64 tokensAddr,
                                           u64 pageTablesAddr, u64 logitsAddr, u64 pageSizeArg) {
    __shared__ float x[TTS_D];
    __shared__ float h[TTS_D];
    __shared__ float q[TTS_D];
    __shared__ float att[TTS_D];
    __shared__ float u[TTS_FFN];
    __shared__ float kv[2 * TTS_D];
    __shared__ float scores[TTS_MAX_POSITIONS];
    __shared__ float scratch[32];
    __shared__ float partial[TTS_MAX_THREADS];

    const float *w = reinterpret_cast<const float *>(weightsAddr);
    char *pool = reinterpret_cast<char *>(poolAddr);
    const int *job = reinterpret_cast<const int *>(jobsAddr) + blockIdx.x * TTS_JOB_INTS;
    const int *tokens = reinterpret_cast<const int *>(tokensAddr) + job[0];
    int count = job[1];
    int first = job[2];
    const int *pages = reinterpret_cast<const int *>(pageTablesAddr) + job[3];
    int logitsRow = job[4];
    int pageSize = (int)pageSizeArg;
    const float scale = 1.0f / sqrtf((float)TTS_HEAD_DIM);

    for (int t = 0; t < count; t++) {
        int pos = first + t;
        int token = tokens[t];
        for (int i = threadIdx.x; i < TTS_D; i += blockDim.x) {
            x[i] = w[TTS_EMBEDDING + token * TTS_D + i];
        }
        __syncthreads();
        for (int l = 0; l < TTS_LAYERS; l++) {
            tts_rmsnorm(x, w + TTS_ATTN_NORM(l), h, scratch);
            tts_matvec(h, TTS_D, w + TTS_WQ(l), TTS_D, q, false);
            tts_matvec(h, TTS_D, w + TTS_WK(l), TTS_D, kv, false);
            tts_matvec(h, TTS_D, w + TTS_WV(l), TTS_D, kv + TTS_D, false);
            tts_rope(q, w + TTS_INV_FREQ, pos);
            tts_rope(kv, w + TTS_INV_FREQ, pos);
            float *mine = tts_slot(pool, pages, pos, pageSize) + l * 2 * TTS_D;
            for (int i = threadIdx.x; i < 2 * TTS_D; i += blockDim.x) {
                mine[i] = kv[i];
            }
            __threadfence_block();
            __syncthreads();
            for (int head = 0; head < TTS_HEADS; head++) {
                int hOff = head * TTS_HEAD_DIM;
                float localMax = -INFINITY;
                for (int j = threadIdx.x; j <= pos; j += blockDim.x) {
                    const float *k = tts_slot(pool, pages, j, pageSize) + l * 2 * TTS_D + hOff;
                    float s = 0.f;
                    for (int i = 0; i < TTS_HEAD_DIM; i++) {
                        s += q[hOff + i] * k[i];
                    }
                    s *= scale;
                    scores[j] = s;
                    localMax = fmaxf(localMax, s);
                }
                float max = tts_block_max(localMax, scratch);
                float localSum = 0.f;
                for (int j = threadIdx.x; j <= pos; j += blockDim.x) {
                    float e = expf(scores[j] - max);
                    scores[j] = e;
                    localSum += e;
                }
                float sum = tts_block_sum(localSum, scratch);
                // adjacent threads read adjacent dimensions of one position (a warp: two positions' 64 bytes);
                // blockDim / HEAD_DIM parts each take every parts-th position, summed in order afterwards
                int dim = threadIdx.x % TTS_HEAD_DIM;
                int part = threadIdx.x / TTS_HEAD_DIM;
                int parts = blockDim.x / TTS_HEAD_DIM;
                float acc = 0.f;
#pragma unroll 4
                for (int j = part; j <= pos; j += parts) {
                    const float *v = tts_slot(pool, pages, j, pageSize) + l * 2 * TTS_D + TTS_D + hOff;
                    acc += scores[j] * v[dim];
                }
                partial[threadIdx.x] = acc;
                __syncthreads();
                if (threadIdx.x < TTS_HEAD_DIM) {
                    float total = 0.f;
                    for (int q2 = 0; q2 < parts; q2++) {
                        total += partial[q2 * TTS_HEAD_DIM + threadIdx.x];
                    }
                    att[hOff + threadIdx.x] = total / sum;
                }
                __syncthreads();
            }
            tts_matvec(att, TTS_D, w + TTS_WO(l), TTS_D, x, true);
            tts_rmsnorm(x, w + TTS_MLP_NORM(l), h, scratch);
            tts_matvec(h, TTS_D, w + TTS_W1(l), TTS_FFN, u, false);
            for (int i = threadIdx.x; i < TTS_FFN; i += blockDim.x) {
                u[i] = u[i] / (1.f + expf(-u[i]));
            }
            __syncthreads();
            tts_matvec(u, TTS_FFN, w + TTS_W2(l), TTS_D, x, true);
        }
    }
    if (logitsRow >= 0 && count > 0) {
        tts_rmsnorm(x, w + TTS_FINAL_NORM, h, scratch);
        float *out = reinterpret_cast<float *>(logitsAddr) + (u64)logitsRow * TTS_VOCAB;
        for (int v = threadIdx.x; v < TTS_VOCAB; v += blockDim.x) {
            float s = 0.f;
            for (int i = 0; i < TTS_D; i++) {
                s += h[i] * w[TTS_HEAD + i * TTS_VOCAB + v];
            }
            out[v] = TTS_LOGIT_SCALE * s + w[TTS_PRIOR + v];
        }
    }
}

// ---- resident planning (docs/resident-planning.md): the lm's gather and EOS ramp inside a captured decode step.
// The upload (io.mstar.worker.resident.ResidentUpload): int32 [count, padded, runs], then maxRows slots.
#define TTS_RES_COUNT 0
#define TTS_RES_SLOTS 3
#define TTS_EOS 257
#define TTS_EOS_RAMP 0.4f
#define TTS_EOS_ONSET 24

// One job per row for toy_tts_forward: a real row feeds its token at its sequence length, its pages read off its
// row of the page table; a padding row feeds nothing and wants no logits.
extern "C" __global__ void toy_tts_resident_gather(u64 uploadAddr, u64 narrowAddr, u64 cols, u64 tokenColumn,
                                                   u64 seqLenColumn, u64 pageWidth, u64 jobsAddr, u64 tokensAddr,
                                                   u64 padded) {
    const int *up = reinterpret_cast<const int *>(uploadAddr);
    const int *narrow = reinterpret_cast<const int *>(narrowAddr);
    int *jobs = reinterpret_cast<int *>(jobsAddr);
    int *tokens = reinterpret_cast<int *>(tokensAddr);
    int count = up[TTS_RES_COUNT];
    for (int j = threadIdx.x; j < (int)padded; j += blockDim.x) {
        int *job = jobs + j * TTS_JOB_INTS;
        if (j < count) {
            int slot = up[TTS_RES_SLOTS + j];
            const int *row = narrow + (u64)slot * cols;
            job[0] = j;
            job[1] = 1;
            job[2] = row[seqLenColumn];
            job[3] = slot * (int)pageWidth;
            job[4] = j;
            tokens[j] = row[tokenColumn];
        } else {
            job[0] = 0;
            job[1] = 0;
            job[2] = 0;
            job[3] = 0;
            job[4] = -1;
            tokens[j] = 0;
        }
    }
}

// ToyTtsLmKernel's EOS ramp on each real row's logits: masked with ignore_eos, else + EOS_RAMP * (generated - ONSET),
// rounded as the host's float arithmetic (no fused multiply-add).
extern "C" __global__ void toy_tts_resident_bias(u64 uploadAddr, u64 narrowAddr, u64 cols, u64 generatedColumn,
                                                 u64 ignoreEosColumn, u64 logitsAddr) {
    const int *up = reinterpret_cast<const int *>(uploadAddr);
    const int *narrow = reinterpret_cast<const int *>(narrowAddr);
    float *logits = reinterpret_cast<float *>(logitsAddr);
    int count = up[TTS_RES_COUNT];
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
        const int *row = narrow + (u64)up[TTS_RES_SLOTS + j] * cols;
        float *eos = logits + (u64)j * TTS_VOCAB + TTS_EOS;
        if (row[ignoreEosColumn]) {
            *eos = -INFINITY;
        } else {
            *eos = __fadd_rn(*eos, __fmul_rn(TTS_EOS_RAMP, (float)(row[generatedColumn] - TTS_EOS_ONSET)));
        }
    }
}
