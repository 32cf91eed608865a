// One rank's toy-tts lm on a tensor-parallel group of GPUs, loaded as PTX by
// io.mstar.worker.kernel.tts.cuda.CudaTensorParallelLmBackend (docs/toy-tts.md#tensor-parallelism).
//
// The same math, in the same order, as the host's LmForward on one LmShard: a batch runs layer by layer; per layer
// every fed token's attention over the rank's heads writes the block partials of its rows of Wo, the ranks all-gather
// the partials (NCCL, or shared memory staged through the host), every rank adds the ToyTtsWeights.MAX_TP blocks in
// the one order ((b0 + b1) + b2) + b3 and the residual; the same for the MLP and W2. Every reduction here has one fixed
// order that does not depend on the rank or the tp_size, so a group of any size computes the bits of one rank holding
// the whole model (tp_size 1) on the same GPU; against the host reference only float rounding differs (expf, sinf).
//
// Simple on purpose: one thread block per job (tokens in order, each attending to every earlier position and itself)
// or per token row, plain loops, no tensor cores. Every parameter is 64 bits wide (CudaDevice.launch); weight
// pointers are the shard's tensors, found by the host from ToyTtsWeights.layout(tp_size).

typedef unsigned long long u64;

#define TP_D 64
#define TP_HEAD_DIM 16
#define TP_MAX_TP 4
#define TP_MAX_DIMS 64
#define TP_MAX_FFN 128
#define TP_VOCAB 258
#define TP_NORM_EPS 1e-5f
#define TP_LOGIT_SCALE 3.0f
// Threads of the attention and MLP blocks: the attention's online softmax splits positions over all of them.
#define TP_THREADS 128
// A job table row: token offset (also its first row), token count, first position, page-table offset, logits row.
#define TP_JOB_INTS 5
// The running maximum of a softmax state that saw no position (see toy_tts_kernels.cu).
#define TP_NO_SCORE -1e30f

// h = rmsnorm(x) * gain over TP_D values; thread 0 sums in index order (one fixed order), every thread scales.
__device__ void tp_rmsnorm(const float *x, const float *gain, float *h, float *inv) {
    if (threadIdx.x == 0) {
        float ss = 0.0f;
        for (int i = 0; i < TP_D; i++) {
            ss += x[i] * x[i];
        }
        *inv = 1.0f / sqrtf(ss / TP_D + TP_NORM_EPS);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < TP_D; i += blockDim.x) {
        h[i] = x[i] * *inv * gain[i];
    }
    __syncthreads();
}

// sum_r in[r] * m[r * cols + c] for r in [0, rows), rows in order.
__device__ float tp_dot(const float *in, const float *m, int rows, int cols, int c) {
    float s = 0.0f;
    for (int r = 0; r < rows; r++) {
        s += in[r] * m[r * cols + c];
    }
    return s;
}

// RoPE on pair i of the vector v (pairs (2i, 2i+1) within each head, angle pos * invFreq[i % (HEAD_DIM / 2)]).
__device__ void tp_rope(float *v, int pair, int pos, const float *invFreq) {
    float angle = pos * invFreq[pair % (TP_HEAD_DIM / 2)];
    float c = cosf(angle);
    float s = sinf(angle);
    float x0 = v[2 * pair];
    float x1 = v[2 * pair + 1];
    v[2 * pair] = x0 * c - x1 * s;
    v[2 * pair + 1] = x0 * s + x1 * c;
}

__device__ float *tp_slot(char *pool, const int *pages, int pos, int pageSize, int slotFloats) {
    u64 bytesPerToken = (u64)slotFloats * sizeof(float);
    return reinterpret_cast<float *>(pool + ((u64)pages[pos / pageSize] * pageSize + pos % pageSize) * bytesPerToken);
}

// The sizes this file is compiled for, in TP_DIMS order, so that the host can refuse a model they do not match.
#define TP_DIMS 5
extern "C" __global__ void toy_tts_tp_dims(u64 out) {
    int *dims = reinterpret_cast<int *>(out);
    dims[0] = TP_D;
    dims[1] = TP_HEAD_DIM;
    dims[2] = TP_MAX_TP;
    dims[3] = TP_MAX_FFN;
    dims[4] = TP_VOCAB;
}

// x[row] = embedding[token] for every fed token; grid: rows, block: TP_D.
extern "C" __global__ void toy_tts_tp_embed(u64 embeddingAddr, u64 tokensAddr, u64 xAddr) {
    const float *embedding = reinterpret_cast<const float *>(embeddingAddr);
    int token = reinterpret_cast<const int *>(tokensAddr)[blockIdx.x];
    reinterpret_cast<float *>(xAddr)[blockIdx.x * TP_D + threadIdx.x] = embedding[(u64)token * TP_D + threadIdx.x];
}

// Layer l's attention of one job (grid: jobs, block: TP_THREADS): per fed token in order, its Q, K and V of the
// rank's heads, RoPE, K and V into the token's slot, causal softmax attention of each head, and the partials of the
// rank's row blocks of Wo into blocks[(firstBlock + b) * rows * TP_D + row * TP_D].
extern "C" __global__ void __launch_bounds__(TP_THREADS)
toy_tts_tp_attention(u64 xAddr, u64 normAddr, u64 wqAddr, u64 wkAddr, u64 wvAddr, u64 woAddr, u64 invFreqAddr,
                     u64 poolAddr, u64 jobsAddr, u64 pageTablesAddr, u64 blocksAddr, u64 rowsArg, u64 dimsArg,
                     u64 layerArg, u64 pageSizeArg, u64 slotFloatsArg, u64 firstBlockArg) {
    __shared__ float h[TP_D];
    __shared__ float q[TP_MAX_DIMS];
    __shared__ float k[TP_MAX_DIMS];
    __shared__ float v[TP_MAX_DIMS];
    __shared__ float att[TP_MAX_DIMS];
    __shared__ float inv;
    __shared__ float stateMax[TP_THREADS];
    __shared__ float stateSum[TP_THREADS];
    __shared__ float stateAcc[TP_THREADS][TP_HEAD_DIM];
    const float *x = reinterpret_cast<const float *>(xAddr);
    const float *wq = reinterpret_cast<const float *>(wqAddr);
    const float *wk = reinterpret_cast<const float *>(wkAddr);
    const float *wv = reinterpret_cast<const float *>(wvAddr);
    const float *wo = reinterpret_cast<const float *>(woAddr);
    const float *invFreq = reinterpret_cast<const float *>(invFreqAddr);
    const int *job = reinterpret_cast<const int *>(jobsAddr) + blockIdx.x * TP_JOB_INTS;
    const int *pages = reinterpret_cast<const int *>(pageTablesAddr) + job[3];
    char *pool = reinterpret_cast<char *>(poolAddr);
    float *blocks = reinterpret_cast<float *>(blocksAddr);
    int rows = (int)rowsArg;
    int dims = (int)dimsArg;
    int heads = dims / TP_HEAD_DIM;
    int l = (int)layerArg;
    int pageSize = (int)pageSizeArg;
    int slotFloats = (int)slotFloatsArg; // every layer's K and V of the rank's heads
    int t = threadIdx.x;
    float scale = 1.0f / sqrtf((float)TP_HEAD_DIM);
    for (int f = 0; f < job[1]; f++) {
        int row = job[0] + f;
        int pos = job[2] + f;
        tp_rmsnorm(x + (u64)row * TP_D, reinterpret_cast<const float *>(normAddr), h, &inv);
        for (int i = t; i < 3 * dims; i += TP_THREADS) {
            int c = i % dims;
            float s = tp_dot(h, i < dims ? wq : i < 2 * dims ? wk : wv, TP_D, dims, c);
            (i < dims ? q : i < 2 * dims ? k : v)[c] = s;
        }
        __syncthreads();
        for (int p = t; p < dims; p += TP_THREADS) { // dims / 2 pairs of q, then of k
            tp_rope(p < dims / 2 ? q : k, p % (dims / 2), pos, invFreq);
        }
        __syncthreads();
        float *mine = tp_slot(pool, pages, pos, pageSize, slotFloats) + l * 2 * dims;
        for (int i = t; i < 2 * dims; i += TP_THREADS) {
            mine[i] = i < dims ? k[i] : v[i - dims];
        }
        __syncthreads(); // this token's K and V are read back below, by other threads
        for (int head = 0; head < heads; head++) {
            // an online softmax over positions t, t + TP_THREADS, ...; the states then merge in thread order
            float m = TP_NO_SCORE;
            float sum = 0.0f;
            float acc[TP_HEAD_DIM];
            for (int i = 0; i < TP_HEAD_DIM; i++) {
                acc[i] = 0.0f;
            }
            for (int j = t; j <= pos; j += TP_THREADS) {
                const float *kj = tp_slot(pool, pages, j, pageSize, slotFloats) + l * 2 * dims + head * TP_HEAD_DIM;
                float score = 0.0f;
                for (int i = 0; i < TP_HEAD_DIM; i++) {
                    score += q[head * TP_HEAD_DIM + i] * kj[i];
                }
                score *= scale;
                float mNew = fmaxf(m, score);
                float correction = expf(m - mNew);
                float p = expf(score - mNew);
                sum = sum * correction + p;
                for (int i = 0; i < TP_HEAD_DIM; i++) {
                    acc[i] = acc[i] * correction + p * kj[dims + i];
                }
                m = mNew;
            }
            stateMax[t] = m;
            stateSum[t] = sum;
            for (int i = 0; i < TP_HEAD_DIM; i++) {
                stateAcc[t][i] = acc[i];
            }
            __syncthreads();
            if (t < TP_HEAD_DIM) {
                float mAll = TP_NO_SCORE;
                for (int s = 0; s < TP_THREADS; s++) {
                    mAll = fmaxf(mAll, stateMax[s]);
                }
                float total = 0.0f;
                float a = 0.0f;
                for (int s = 0; s < TP_THREADS; s++) {
                    float w = expf(stateMax[s] - mAll);
                    total += stateSum[s] * w;
                    a += stateAcc[s][t] * w;
                }
                att[head * TP_HEAD_DIM + t] = a / total;
            }
            __syncthreads();
        }
        // row-parallel Wo: the rank's blocks of TP_D / TP_MAX_TP rows (one head each)
        int blockRows = TP_D / TP_MAX_TP;
        int ownBlocks = dims / blockRows;
        for (int i = t; i < ownBlocks * TP_D; i += TP_THREADS) {
            int b = i / TP_D;
            int c = i % TP_D;
            float s = tp_dot(att + b * blockRows, wo + (u64)b * blockRows * TP_D, blockRows, TP_D, c);
            blocks[((u64)(firstBlockArg + b) * rows + row) * TP_D + c] = s;
        }
        __syncthreads();
    }
}

// Layer l's MLP of one token row (grid: rows, block: TP_THREADS): rmsnorm, the rank's W1 columns, SiLU, and the
// partials of its row blocks of W2 (TP_FFN / TP_MAX_TP rows each) into blocks.
extern "C" __global__ void __launch_bounds__(TP_THREADS)
toy_tts_tp_mlp(u64 xAddr, u64 normAddr, u64 w1Addr, u64 w2Addr, u64 blocksAddr, u64 rowsArg, u64 ffnArg,
               u64 ffnTotalArg, u64 firstBlockArg) {
    __shared__ float h[TP_D];
    __shared__ float u[TP_MAX_FFN];
    __shared__ float inv;
    const float *w1 = reinterpret_cast<const float *>(w1Addr);
    const float *w2 = reinterpret_cast<const float *>(w2Addr);
    float *blocks = reinterpret_cast<float *>(blocksAddr);
    int row = blockIdx.x;
    int rows = (int)rowsArg;
    int ffn = (int)ffnArg;
    tp_rmsnorm(reinterpret_cast<const float *>(xAddr) + (u64)row * TP_D, reinterpret_cast<const float *>(normAddr),
               h, &inv);
    for (int c = threadIdx.x; c < ffn; c += TP_THREADS) {
        float s = tp_dot(h, w1, TP_D, ffn, c);
        u[c] = s / (1.0f + expf(-s));
    }
    __syncthreads();
    int blockRows = (int)ffnTotalArg / TP_MAX_TP;
    int ownBlocks = ffn / blockRows;
    for (int i = threadIdx.x; i < ownBlocks * TP_D; i += TP_THREADS) {
        int b = i / TP_D;
        int c = i % TP_D;
        float s = tp_dot(u + b * blockRows, w2 + (u64)b * blockRows * TP_D, blockRows, TP_D, c);
        blocks[((u64)(firstBlockArg + b) * rows + row) * TP_D + c] = s;
    }
}

// x[i] += ((b0 + b1) + b2) + b3 over n = rows * TP_D floats; block b's partials at blocks[b * n].
extern "C" __global__ void toy_tts_tp_add(u64 blocksAddr, u64 xAddr, u64 nArg) {
    const float *blocks = reinterpret_cast<const float *>(blocksAddr);
    float *x = reinterpret_cast<float *>(xAddr);
    u64 n = nArg;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = blocks[i];
        for (int b = 1; b < TP_MAX_TP; b++) {
            s += blocks[b * n + i];
        }
        x[i] += s;
    }
}

// Logits after each job's last token, for the jobs that want them (grid: jobs, block: TP_THREADS):
// LOGIT_SCALE * (rmsnorm(x) Head)[v] + prior[v] into logits[row * TP_VOCAB].
extern "C" __global__ void __launch_bounds__(TP_THREADS)
toy_tts_tp_logits(u64 xAddr, u64 normAddr, u64 headAddr, u64 priorAddr, u64 jobsAddr, u64 logitsAddr) {
    __shared__ float h[TP_D];
    __shared__ float inv;
    const int *job = reinterpret_cast<const int *>(jobsAddr) + blockIdx.x * TP_JOB_INTS;
    if (job[4] < 0) {
        return; // the whole block leaves: no barrier is left waiting
    }
    const float *head = reinterpret_cast<const float *>(headAddr);
    const float *prior = reinterpret_cast<const float *>(priorAddr);
    float *logits = reinterpret_cast<float *>(logitsAddr) + (u64)job[4] * TP_VOCAB;
    int row = job[0] + job[1] - 1;
    tp_rmsnorm(reinterpret_cast<const float *>(xAddr) + (u64)row * TP_D, reinterpret_cast<const float *>(normAddr),
               h, &inv);
    for (int c = threadIdx.x; c < TP_VOCAB; c += TP_THREADS) {
        logits[c] = TP_LOGIT_SCALE * tp_dot(h, head, TP_D, TP_VOCAB, c) + prior[c];
    }
}
