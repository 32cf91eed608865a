// Resident planning's own kernels (io.mstar.worker.resident.ResidentCudaKernels, docs/resident-planning.md), launched
// inside a captured decode step: apply the step's upload to the tables, advance narrow cells by the commit rules,
// and sample each row's next token from the sampler's cells, the same function as io.mstar.worker.kv.TokenSampler.
// Built by nvcc -ptx -arch=compute_90. Every parameter is 64 bits wide (CudaDevice.launch passes longs).
//
// The upload (ResidentUpload): int32 [count, padded, runs], maxRows slots, runs * [table, offset, length, valuesAt],
// values. Rows [count, padded) are padding on slot 0, the scratch row: nothing below writes it.

typedef unsigned long long u64;
typedef long long i64;

#define RES_COUNT 0
#define RES_RUNS 2
#define RES_SLOTS 3
#define RES_RUN_INTS 4

// Runs of the upload into their tables; one block per run, grid-strided.
extern "C" __global__ void resident_apply(u64 uploadAddr, u64 tablesAddr, u64 maxRows) {
    const int *up = reinterpret_cast<const int *>(uploadAddr);
    int *const *tables = reinterpret_cast<int *const *>(tablesAddr);
    int runs = up[RES_RUNS];
    const int *records = up + RES_SLOTS + maxRows;
    for (int r = blockIdx.x; r < runs; r += gridDim.x) {
        const int *rec = records + r * RES_RUN_INTS;
        int *table = tables[rec[0]];
        int offset = rec[1];
        int length = rec[2];
        const int *values = up + rec[3];
        for (int i = threadIdx.x; i < length; i += blockDim.x) {
            table[offset + i] = values[i];
        }
    }
}

// table[slot][column] += delta for every real row.
extern "C" __global__ void resident_add(u64 uploadAddr, u64 tableAddr, u64 width, u64 column, i64 delta) {
    const int *up = reinterpret_cast<const int *>(uploadAddr);
    int *table = reinterpret_cast<int *>(tableAddr);
    int count = up[RES_COUNT];
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
        int slot = up[RES_SLOTS + j];
        table[(u64)slot * width + column] += (int)delta;
    }
}

// A last-page fill after one more position: fill % pageSize + 1.
extern "C" __global__ void resident_fill(u64 uploadAddr, u64 tableAddr, u64 width, u64 column, u64 pageSize) {
    const int *up = reinterpret_cast<const int *>(uploadAddr);
    int *table = reinterpret_cast<int *>(tableAddr);
    int count = up[RES_COUNT];
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
        int slot = up[RES_SLOTS + j];
        int *cell = table + (u64)slot * width + column;
        *cell = *cell % (int)pageSize + 1;
    }
}

// table[slot][column] = values[row] for every real row.
extern "C" __global__ void resident_store(u64 uploadAddr, u64 tableAddr, u64 width, u64 column, u64 valuesAddr) {
    const int *up = reinterpret_cast<const int *>(uploadAddr);
    int *table = reinterpret_cast<int *>(tableAddr);
    const int *values = reinterpret_cast<const int *>(valuesAddr);
    int count = up[RES_COUNT];
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
        int slot = up[RES_SLOTS + j];
        table[(u64)slot * width + column] = values[j];
    }
}

#define SAMPLE_THREADS 128
#define SAMPLE_MAX_VOCAB 1024
// The sampler's narrow columns, in the order SamplerResidentTable declares them, from firstColumn on.
#define S_TEMP_HI 0
#define S_TEMP_LO 1
#define S_TOP_K 2
#define S_TOP_P_HI 3
#define S_TOP_P_LO 4
#define S_VOCAB 5
#define S_SEED_HI 6
#define S_SEED_LO 7
#define S_STEP 8

__device__ double res_double(const int *row, int hi, int lo) {
    u64 bits = ((u64)(unsigned)row[hi] << 32) | (u64)(unsigned)row[lo];
    return __longlong_as_double((i64)bits);
}

// TokenSampler.uniform: the SplitMix64 finalizer of seed + (step + 1) * golden gamma.
__device__ double res_uniform(i64 seed, i64 step) {
    u64 z = (u64)seed + (u64)(step + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z = z ^ (z >> 31);
    return (double)(z >> 11) * 0x1.0p-53;
}

// TokenSampler.sortable: an int whose signed order is the float's (-0 below +0).
__device__ int res_sortable(float v) {
    int bits = __float_as_int(v);
    return bits ^ ((bits >> 31) & 0x7FFFFFFF);
}

// One block per real row: the next token from the row's logits, by the row's sampler cells; -1 for unusable logits
// (a NaN or +inf, or every candidate -inf). The sums run in one thread, in the host sampler's order, so the draw is
// the host's up to exp's last bit.
extern "C" __global__ void resident_sample(u64 uploadAddr, u64 narrowAddr, u64 cols, u64 firstColumn,
                                           u64 logitsAddr, u64 vocab, u64 sampledAddr) {
    __shared__ float l[SAMPLE_MAX_VOCAB];
    __shared__ double w[SAMPLE_MAX_VOCAB];
    __shared__ int order[SAMPLE_MAX_VOCAB];
    __shared__ int bad;
    __shared__ int candidates;
    const int *up = reinterpret_cast<const int *>(uploadAddr);
    int j = blockIdx.x;
    if (j >= up[RES_COUNT]) {
        return;
    }
    const int *row = reinterpret_cast<const int *>(narrowAddr) + (u64)up[RES_SLOTS + j] * cols + firstColumn;
    const float *logits = reinterpret_cast<const float *>(logitsAddr) + (u64)j * vocab;
    int *sampled = reinterpret_cast<int *>(sampledAddr);
    int n = (int)vocab;
    if (row[S_VOCAB] > 0 && row[S_VOCAB] < n) {
        n = row[S_VOCAB];
    }
    double temperature = res_double(row, S_TEMP_HI, S_TEMP_LO);
    int topK = row[S_TOP_K];
    double topP = res_double(row, S_TOP_P_HI, S_TOP_P_LO);
    if (threadIdx.x == 0) {
        bad = 0;
        candidates = 0;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = logits[i];
        l[i] = v;
        if (isnan(v) || v == INFINITY) {
            atomicOr(&bad, 1);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int argmax = -1;
        float max = -INFINITY;
        for (int i = 0; i < n; i++) {
            if (l[i] > max) {
                max = l[i];
                argmax = i;
            }
        }
        if (bad || argmax < 0) {
            sampled[j] = -1;
            bad = 1;
        } else if (temperature == 0) {
            sampled[j] = argmax;
            bad = 1; // done
        } else {
            w[SAMPLE_MAX_VOCAB - 1] = max; // park max for the other threads
        }
    }
    __syncthreads();
    if (bad) {
        return;
    }
    float max = (float)w[SAMPLE_MAX_VOCAB - 1];
    __syncthreads();
    double invT = 1.0 / temperature;
    bool restricted = (topK > 0 && topK < n) || topP < 1;
    if (!restricted) {
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            w[i] = exp(((double)l[i] - (double)max) * invT);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            double total = 0;
            for (int i = 0; i < n; i++) {
                total += w[i];
            }
            double target = res_uniform(((i64)row[S_SEED_HI] << 32) | (unsigned)row[S_SEED_LO], row[S_STEP]) * total;
            double cumulative = 0;
            int last = -1;
            int pick = -1;
            for (int i = 0; i < n && pick < 0; i++) {
                if (w[i] > 0) {
                    cumulative += w[i];
                    last = i;
                    if (cumulative > target) {
                        pick = i;
                    }
                }
            }
            sampled[j] = pick >= 0 ? pick : last;
        }
        return;
    }
    // rank of each finite candidate by (descending logit, ascending id), as the host's one primitive sort
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if (l[i] == -INFINITY) {
            continue;
        }
        int key = res_sortable(l[i]);
        int rank = 0;
        for (int k = 0; k < n; k++) {
            if (l[k] == -INFINITY || k == i) {
                continue;
            }
            int other = res_sortable(l[k]);
            if (other > key || (other == key && k < i)) {
                rank++;
            }
        }
        order[rank] = i;
        atomicAdd(&candidates, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int m = candidates;
        int kept = topK > 0 ? min(topK, m) : m;
        double total = 0;
        for (int r = 0; r < kept; r++) {
            total += exp(((double)l[order[r]] - (double)max) * invT);
        }
        if (topP < 1) {
            double threshold = topP * total;
            double cumulative = 0;
            int prefix = 0;
            while (prefix < kept) {
                cumulative += exp(((double)l[order[prefix]] - (double)max) * invT);
                prefix++;
                if (cumulative >= threshold) {
                    break;
                }
            }
            kept = prefix;
            total = cumulative;
        }
        double target = res_uniform(((i64)row[S_SEED_HI] << 32) | (unsigned)row[S_SEED_LO], row[S_STEP]) * total;
        double cumulative = 0;
        int pick = order[kept - 1];
        for (int r = 0; r < kept; r++) {
            cumulative += exp(((double)l[order[r]] - (double)max) * invT);
            if (cumulative > target) {
                pick = order[r];
                break;
            }
        }
        sampled[j] = pick;
    }
}
