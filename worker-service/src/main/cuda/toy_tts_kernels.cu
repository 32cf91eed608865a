// The toy-tts language model (io.mstar.model.ToyTtsModel, docs/toy-tts.md) on a GPU, loaded as PTX by
// io.mstar.worker.kernel.tts.cuda.CudaLmBackend. Built by nvcc -ptx -arch=compute_90 at build time.
//
// The same function as the Java reference (HostLmBackend): per token, per layer, RMSNorm, Q/K/V, RoPE,
// causal softmax attention over the request's paged KV cache, output projection, RMSNorm, SiLU MLP; then
// the final RMSNorm and the output head plus the per-byte prior. Only float rounding differs (summation
// order, expf/cosf/sinf); docs/toy-tts.md states the tolerance.
//
// Launch: one block of TTS_FORWARD_THREADS (512) threads per job (request); a job feeds its tokens one after the
// other, each attending to every earlier position and itself, so prefill and decode are the same kernel. Every
// parameter is 64 bits wide so the host passes plain longs (CudaDevice.launch).
//
// Within a block, per token: each mat-vec spreads over all threads (a float4 of columns times a few rows each, the
// partial sums met by warp shuffles and a fixed tree over the warps), its weights loaded a stage ahead; the 4 heads
// attend at once, 128 threads each, every thread keeping an online softmax over every 128th position (no scores
// array, so no bound on positions from shared memory), the states merged per warp by shuffles, then per head.
// Reductions have a fixed order: the same inputs give the same bits on every run.

typedef unsigned long long u64;

#define TTS_D 64
#define TTS_LAYERS 2
#define TTS_HEADS 4
#define TTS_HEAD_DIM 16
#define TTS_FFN 128
#define TTS_VOCAB 258
#define TTS_THREADS 128
// toy_tts_forward's block, which its thread mapping assumes exactly (CudaLmBackend.FORWARD_THREADS): the attention
// runs the heads side by side, TTS_HEAD_THREADS threads (whole warps) each.
#define TTS_FORWARD_THREADS 512
#define TTS_WARPS (TTS_FORWARD_THREADS / 32)
#define TTS_HEAD_THREADS (TTS_FORWARD_THREADS / TTS_HEADS)
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

// The running maximum of a softmax state that saw no position: below every score, yet finite, so merging states
// weighs it 0 where -INFINITY would give NaN (-inf - -inf) when no lane of a warp saw a position.
#define TTS_NO_SCORE -1e30f

// 1 / rms(x) over TTS_D = 2 * 32 values, each warp computing it on its own (the same bits in every warp): no barrier.
__device__ float tts_inv_rms(const float *x) {
    int lane = threadIdx.x % 32;
    float ss = x[lane] * x[lane] + x[lane + 32] * x[lane + 32];
    for (int o = 16; o > 0; o >>= 1) {
        ss += __shfl_xor_sync(0xffffffff, ss, o);
    }
    return 1.0f / sqrtf(ss / TTS_D + TTS_NORM_EPS);
}

// Component i of v; i is a constant once unrolled, so float4 arrays stay in registers.
__device__ float tts_at(const float4 &v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// A [ROWS][COLS] mat-vec over the whole block (weights row-major, as laid out): a thread takes one float4 of columns
// (QUADS of them span a row) in PER_THREAD rows, row(i) = group + i * GROUPS, so a warp reads whole rows and a
// thread's chain is a few products; a column's GROUPS partial sums meet in-warp, then across warps in shared memory.
template <int ROWS, int COLS> struct TtsSplit {
    static constexpr int QUADS = COLS / 4;
    static constexpr int GROUPS = TTS_FORWARD_THREADS / QUADS;
    static constexpr int PER_THREAD = ROWS / GROUPS;
    __device__ static int row(int i) { return threadIdx.x / QUADS + i * GROUPS; }
};

// This thread's weights of MATS consecutive [ROWS][COLS] matrices at m: loaded a stage ahead of their use, so their
// latency overlaps the stage before.
template <int ROWS, int COLS, int MATS>
__device__ void tts_load(const float *m, float4 (&f)[MATS][TtsSplit<ROWS, COLS>::PER_THREAD]) {
    typedef TtsSplit<ROWS, COLS> S;
#pragma unroll
    for (int k = 0; k < MATS; k++) {
#pragma unroll
        for (int i = 0; i < S::PER_THREAD; i++) {
            f[k][i] = reinterpret_cast<const float4 *>(m + k * ROWS * COLS + S::row(i) * COLS)[threadIdx.x % S::QUADS];
        }
    }
}

// sum_i in[i] * f[k][i] per column, added over the warp's row groups; partial[warp][k * COLS + column] gets it.
template <int ROWS, int COLS, int MATS>
__device__ void tts_partials(const float (&in)[TtsSplit<ROWS, COLS>::PER_THREAD],
                             const float4 (&f)[MATS][TtsSplit<ROWS, COLS>::PER_THREAD], float *partial) {
    typedef TtsSplit<ROWS, COLS> S;
    int lane = threadIdx.x % 32;
#pragma unroll
    for (int k = 0; k < MATS; k++) {
        float4 s = make_float4(in[0] * f[k][0].x, in[0] * f[k][0].y, in[0] * f[k][0].z, in[0] * f[k][0].w);
#pragma unroll
        for (int i = 1; i < S::PER_THREAD; i++) {
            s.x += in[i] * f[k][i].x;
            s.y += in[i] * f[k][i].y;
            s.z += in[i] * f[k][i].z;
            s.w += in[i] * f[k][i].w;
        }
#pragma unroll
        for (int o = 16; o >= S::QUADS; o >>= 1) {
            s.x += __shfl_xor_sync(0xffffffff, s.x, o);
            s.y += __shfl_xor_sync(0xffffffff, s.y, o);
            s.z += __shfl_xor_sync(0xffffffff, s.z, o);
            s.w += __shfl_xor_sync(0xffffffff, s.w, o);
        }
        if (lane < S::QUADS) {
            reinterpret_cast<float4 *>(partial + (threadIdx.x / 32) * MATS * COLS + k * COLS)[lane] = s;
        }
    }
}

// Output c of a mat-vec: its TTS_WARPS partials (a warp's row stride apart) added as a fixed tree.
__device__ float tts_sum_warps(const float *partial, int stride, int c) {
    float s[TTS_WARPS];
#pragma unroll
    for (int w = 0; w < TTS_WARPS; w++) {
        s[w] = partial[w * stride + c];
    }
#pragma unroll
    for (int n = TTS_WARPS / 2; n > 0; n /= 2) {
#pragma unroll
        for (int i = 0; i < n; i++) {
            s[i] += s[i + n];
        }
    }
    return s[0];
}

__device__ float *tts_slot(char *pool, const int *pages, int pos, int pageSize) {
    // 32-bit division: a 64-bit one per position was a large share of the attention's time
    u64 page = (u64)pages[pos / pageSize];
    u64 slot = (u64)(pos % pageSize);
    u64 bytesPerToken = TTS_SLOT_FLOATS * sizeof(float);
    return reinterpret_cast<float *>(pool + page * pageSize * bytesPerToken + slot * bytesPerToken);
}

// This thread's head (TTS_HEAD_THREADS threads each) attends over positions 0..pos of layer l, an online softmax
// (running max m, sum, weighted values acc) over positions lane-in-head, + TTS_HEAD_THREADS, ...; the warp then
// merges its lanes' states into warpMax/warpSum/warpAcc[warp].
__device__ void tts_attend(const float *q, char *pool, const int *pages, int pageSize, int pos, int l,
                           float *warpMax, float *warpSum, float (*warpAcc)[TTS_HEAD_DIM]) {
    int head = threadIdx.x / TTS_HEAD_THREADS;
    int lane = threadIdx.x % 32;
    int offset = l * 2 * TTS_D + head * TTS_HEAD_DIM;
    // scaled by a power of two: the same bits as scaling each dot product
    const float scale = 1.0f / sqrtf((float)TTS_HEAD_DIM);
    float qh[TTS_HEAD_DIM];
#pragma unroll
    for (int i = 0; i < TTS_HEAD_DIM / 4; i++) {
        float4 v = reinterpret_cast<const float4 *>(q + head * TTS_HEAD_DIM)[i];
#pragma unroll
        for (int c = 0; c < 4; c++) {
            qh[4 * i + c] = tts_at(v, c) * scale;
        }
    }
    float m = TTS_NO_SCORE;
    float sum = 0.f;
    float acc[TTS_HEAD_DIM];
#pragma unroll
    for (int i = 0; i < TTS_HEAD_DIM; i++) {
        acc[i] = 0.f;
    }
    int j = threadIdx.x % TTS_HEAD_THREADS;
    const float *kv = j <= pos ? tts_slot(pool, pages, j, pageSize) + offset : nullptr;
    while (j <= pos) {
        float4 k[TTS_HEAD_DIM / 4];
        float4 v[TTS_HEAD_DIM / 4];
#pragma unroll
        for (int i = 0; i < TTS_HEAD_DIM / 4; i++) {
            k[i] = reinterpret_cast<const float4 *>(kv)[i];
            v[i] = reinterpret_cast<const float4 *>(kv + TTS_D)[i];
        }
        // the next position's page-table read goes out with this position's K and V
        j += TTS_HEAD_THREADS;
        if (j <= pos) {
            kv = tts_slot(pool, pages, j, pageSize) + offset;
        }
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < TTS_HEAD_DIM; i++) {
            s += qh[i] * tts_at(k[i / 4], i % 4);
        }
        // one expf a position: rescale what came before only when the maximum rises
        if (s > m) {
            float c = expf(m - s);
            m = s;
            sum = sum * c + 1.f;
#pragma unroll
            for (int i = 0; i < TTS_HEAD_DIM; i++) {
                acc[i] = acc[i] * c + tts_at(v[i / 4], i % 4);
            }
        } else {
            float p = expf(s - m);
            sum += p;
#pragma unroll
            for (int i = 0; i < TTS_HEAD_DIM; i++) {
                acc[i] += p * tts_at(v[i / 4], i % 4);
            }
        }
    }
    float wm = m;
    for (int o = 16; o > 0; o >>= 1) {
        wm = fmaxf(wm, __shfl_xor_sync(0xffffffff, wm, o));
    }
    float f = expf(m - wm);
    sum *= f;
#pragma unroll
    for (int i = 0; i < TTS_HEAD_DIM; i++) {
        acc[i] *= f;
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_xor_sync(0xffffffff, sum, o);
    }
    // reduce-scatter: each step a lane keeps half of its dimensions, summed with its partner's, so lanes 2d and
    // 2d + 1 end with dimension d: 16 shuffles where summing all 16 dimensions at each of 5 steps takes 80
#pragma unroll
    for (int n = TTS_HEAD_DIM / 2, o = 16; n > 0; n /= 2, o /= 2) {
        bool upper = (lane & o) != 0;
#pragma unroll
        for (int i = 0; i < n; i++) {
            float send = upper ? acc[i] : acc[i + n];
            float keep = upper ? acc[i + n] : acc[i];
            acc[i] = keep + __shfl_xor_sync(0xffffffff, send, o);
        }
    }
    acc[0] += __shfl_xor_sync(0xffffffff, acc[0], 1);
    int warp = threadIdx.x / 32;
    if (lane == 0) {
        warpMax[warp] = wm;
        warpSum[warp] = sum;
    }
    if (lane % 2 == 0) {
        warpAcc[warp][lane / 2] = acc[0];
    }
}

// One block of TTS_FORWARD_THREADS per job. jobs: TTS_JOB_INTS ints per job; tokens and pageTables: the jobs' ids and
// page tables concatenated; logits: rows of TTS_VOCAB floats for the jobs that want them.
extern "C" __global__ void __launch_bounds__(TTS_FORWARD_THREADS)
toy_tts_forward(u64 weightsAddr, u64 poolAddr, u64 jobsAddr, u64 tokensAddr, u64 pageTablesAddr, u64 logitsAddr,
                u64 pageSizeArg) {
    typedef TtsSplit<TTS_D, TTS_D> Sd;     // Wq, Wk, Wv, Wo
    typedef TtsSplit<TTS_D, TTS_FFN> S1;   // W1
    typedef TtsSplit<TTS_FFN, TTS_D> S2;   // W2
    __shared__ float x[TTS_D];
    __shared__ __align__(16) float q[TTS_D];
    __shared__ float att[TTS_D];
    __shared__ float u[TTS_FFN];
    __shared__ float ropeCos[TTS_HEAD_DIM / 2];
    __shared__ float ropeSin[TTS_HEAD_DIM / 2];
    // a mat-vec's per-warp partial sums (Q, K and V at once is the largest); the head's 4 row groups fit too
    __shared__ __align__(16) float partial[TTS_WARPS * 3 * TTS_D];
    __shared__ float warpMax[TTS_WARPS];
    __shared__ float warpSum[TTS_WARPS];
    __shared__ float warpAcc[TTS_WARPS][TTS_HEAD_DIM];

    const float *w = reinterpret_cast<const float *>(weightsAddr);
    char *pool = reinterpret_cast<char *>(poolAddr);
    const int *job = reinterpret_cast<const int *>(jobsAddr) + blockIdx.x * TTS_JOB_INTS;
    const int *tokens = reinterpret_cast<const int *>(tokensAddr) + job[0];
    int count = job[1];
    int first = job[2];
    const int *pages = reinterpret_cast<const int *>(pageTablesAddr) + job[3];
    int logitsRow = job[4];
    int pageSize = (int)pageSizeArg;
    int tid = threadIdx.x;

    float4 wqkv[3][Sd::PER_THREAD];
    float4 wo[1][Sd::PER_THREAD];
    float4 w1[1][S1::PER_THREAD];
    float4 w2[1][S2::PER_THREAD];
    if (count > 0) {
        tts_load<TTS_D, TTS_D, 3>(w + TTS_WQ(0), wqkv);
    }
    for (int t = 0; t < count; t++) {
        int pos = first + t;
        if (tid < TTS_D) {
            x[tid] = w[TTS_EMBEDDING + tokens[t] * TTS_D + tid];
        } else if (tid < TTS_D + TTS_HEAD_DIM / 2) {
            int i = tid - TTS_D;
            float angle = pos * w[TTS_INV_FREQ + i];
            ropeCos[i] = cosf(angle);
            ropeSin[i] = sinf(angle);
        }
        float *mine = tts_slot(pool, pages, pos, pageSize);
        __syncthreads();
        for (int l = 0; l < TTS_LAYERS; l++) {
            float inv = tts_inv_rms(x);
            float h[Sd::PER_THREAD];
#pragma unroll
            for (int i = 0; i < Sd::PER_THREAD; i++) {
                h[i] = x[Sd::row(i)] * inv * w[TTS_ATTN_NORM(l) + Sd::row(i)];
            }
            tts_partials<TTS_D, TTS_D, 3>(h, wqkv, partial);
            tts_load<TTS_D, TTS_D, 1>(w + TTS_WO(l), wo);
            __syncthreads();
            if (tid < 3 * TTS_D) { // whole warps: q and k (RoPE on pairs of adjacent lanes), then v
                float v = tts_sum_warps(partial, 3 * TTS_D, tid);
                int c = tid % TTS_D;
                if (tid < 2 * TTS_D) {
                    float other = __shfl_xor_sync(0xffffffff, v, 1);
                    int i = c % TTS_HEAD_DIM / 2;
                    v = c % 2 == 0 ? v * ropeCos[i] - other * ropeSin[i] : other * ropeSin[i] + v * ropeCos[i];
                }
                if (tid < TTS_D) {
                    q[c] = v;
                } else {
                    mine[l * 2 * TTS_D + tid - TTS_D] = v;
                }
            }
            __syncthreads();
            tts_attend(q, pool, pages, pageSize, pos, l, warpMax, warpSum, warpAcc);
            __syncthreads();
            if (tid < TTS_D) {
                int w0 = tid / TTS_HEAD_DIM * (TTS_HEAD_THREADS / 32);
                float mh = warpMax[w0];
#pragma unroll
                for (int i = 1; i < TTS_HEAD_THREADS / 32; i++) {
                    mh = fmaxf(mh, warpMax[w0 + i]);
                }
                float total = 0.f;
                float sum = 0.f;
#pragma unroll
                for (int i = 0; i < TTS_HEAD_THREADS / 32; i++) {
                    float f = expf(warpMax[w0 + i] - mh);
                    total += warpAcc[w0 + i][tid % TTS_HEAD_DIM] * f;
                    sum += warpSum[w0 + i] * f;
                }
                att[tid] = total / sum;
            }
            __syncthreads();
            float a[Sd::PER_THREAD];
#pragma unroll
            for (int i = 0; i < Sd::PER_THREAD; i++) {
                a[i] = att[Sd::row(i)];
            }
            tts_partials<TTS_D, TTS_D, 1>(a, wo, partial);
            tts_load<TTS_D, TTS_FFN, 1>(w + TTS_W1(l), w1);
            __syncthreads();
            if (tid < TTS_D) {
                x[tid] = x[tid] + tts_sum_warps(partial, TTS_D, tid);
            }
            __syncthreads();
            inv = tts_inv_rms(x);
            float g[S1::PER_THREAD];
#pragma unroll
            for (int i = 0; i < S1::PER_THREAD; i++) {
                g[i] = x[S1::row(i)] * inv * w[TTS_MLP_NORM(l) + S1::row(i)];
            }
            tts_partials<TTS_D, TTS_FFN, 1>(g, w1, partial);
            tts_load<TTS_FFN, TTS_D, 1>(w + TTS_W2(l), w2);
            __syncthreads();
            if (tid < TTS_FFN) {
                float z = tts_sum_warps(partial, TTS_FFN, tid);
                u[tid] = z / (1.f + expf(-z));
            }
            __syncthreads();
            float uu[S2::PER_THREAD];
#pragma unroll
            for (int i = 0; i < S2::PER_THREAD; i++) {
                uu[i] = u[S2::row(i)];
            }
            tts_partials<TTS_FFN, TTS_D, 1>(uu, w2, partial);
            if (l + 1 < TTS_LAYERS || t + 1 < count) {
                tts_load<TTS_D, TTS_D, 3>(w + TTS_WQ((l + 1) % TTS_LAYERS), wqkv);
            }
            __syncthreads();
            if (tid < TTS_D) {
                x[tid] = x[tid] + tts_sum_warps(partial, TTS_D, tid);
            }
            __syncthreads();
        }
    }
    if (logitsRow >= 0 && count > 0) {
        // the head's 258 columns as 129 float2 pairs (its rows are not 16-byte aligned) times 4 groups of 16 rows:
        // 516 items, so threads 0..3 take two
        const int pairs = TTS_VOCAB / 2;
        const int groups = 4;
        const int rows = TTS_D / groups;
        float inv = tts_inv_rms(x);
        for (int k = tid; k < pairs * groups; k += TTS_FORWARD_THREADS) {
            int pair = k % pairs;
            int r0 = k / pairs * rows;
            float2 hw[rows];
#pragma unroll
            for (int i = 0; i < rows; i++) {
                hw[i] = reinterpret_cast<const float2 *>(w + TTS_HEAD + (r0 + i) * TTS_VOCAB)[pair];
            }
            float a = 0.f;
            float b = 0.f;
#pragma unroll
            for (int i = 0; i < rows; i++) {
                float h = x[r0 + i] * inv * w[TTS_FINAL_NORM + r0 + i];
                a += h * hw[i].x;
                b += h * hw[i].y;
            }
            partial[k / pairs * TTS_VOCAB + 2 * pair] = a;
            partial[k / pairs * TTS_VOCAB + 2 * pair + 1] = b;
        }
        __syncthreads();
        if (tid < TTS_VOCAB) {
            const float *p = partial + tid;
            float s = (p[0] + p[TTS_VOCAB]) + (p[2 * TTS_VOCAB] + p[3 * TTS_VOCAB]);
            float *out = reinterpret_cast<float *>(logitsAddr) + (u64)logitsRow * TTS_VOCAB;
            out[tid] = TTS_LOGIT_SCALE * s + w[TTS_PRIOR + tid];
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
