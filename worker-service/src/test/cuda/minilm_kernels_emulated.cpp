// minilm_kernels.cu under cuda_emulation.h against straightforward double-precision references; no GPU needed:
//   g++ -std=c++20 -O1 -pthread -x c++ minilm_kernels_emulated.cpp -o /tmp/minilm-emu && /tmp/minilm-emu
// (from this folder). The gpu-tagged MiniLmCudaKernelsGpuTests do the same on real hardware against the Java twins.
#include "cuda_emulation.h"
#include "../../main/cuda/minilm_kernels.cu"
#include <cstdio>
#include <random>
typedef unsigned long long U;
static std::mt19937 rng(42);
std::vector<float> rnd(size_t n, float s) { std::uniform_real_distribution<float> d(-s, s); std::vector<float> v(n); for (auto &x : v) x = d(rng); return v; }
U P(const void *p) { return (U)(uintptr_t)p; }
U bits(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
double maxdiff(const std::vector<float> &a, const std::vector<float> &b) { double m = 0; for (size_t i = 0; i < a.size(); i++) m = std::max(m, (double)std::fabs(a[i] - b[i])); return m; }
int fails = 0;
void check(const char *what, double d, double tol) { printf("%-40s maxdiff %.3g %s\n", what, d, d <= tol ? "ok" : "FAIL"); if (!(d <= tol)) fails++; }

int main() {
    // gemm
    int shapes[][3] = {{1, 1, 1}, {37, 70, 19}, {128, 64, 16}, {130, 100, 45}, {257, 129, 33}};
    for (auto &s : shapes) for (int gelu = 0; gelu < 2; gelu++) {
        int m = s[0], n = s[1], k = s[2];
        auto a = rnd(m * k, 1), w = rnd(k * n, 1), bias = rnd(n, 1);
        std::vector<float> out(m * n, -7), ref(m * n);
        for (int r = 0; r < m; r++) for (int c = 0; c < n; c++) { double acc = bias[c]; for (int kk = 0; kk < k; kk++) acc += (double)a[r * k + kk] * w[kk * n + c]; if (gelu) acc = 0.5 * acc * (1 + erf(acc / sqrt(2.0))); ref[r * n + c] = acc; }
        int tiles = ((m + 127) / 128) * ((n + 63) / 64);
        launch(minilm_gemm_bias, tiles, 256, P(a.data()), P(w.data()), P(bias.data()), P(out.data()), (U)m, (U)n, (U)k, (U)gelu);
        char name[64]; snprintf(name, 64, "gemm %dx%dx%d gelu=%d", m, n, k, gelu); check(name, maxdiff(out, ref), 1e-4);
    }
    // layer norm
    for (int width : {100, 384}) for (int res = 0; res < 2; res++) {
        int rows = 5; auto x = rnd(rows * width, 3), r = rnd(rows * width, 3), g = rnd(width, 1), b = rnd(width, 1);
        std::vector<float> ref(rows * width);
        for (int i = 0; i < rows; i++) { double mean = 0, var = 0; std::vector<double> v(width); for (int c = 0; c < width; c++) { v[c] = x[i * width + c] + (res ? r[i * width + c] : 0); mean += v[c]; } mean /= width; for (int c = 0; c < width; c++) var += (v[c] - mean) * (v[c] - mean); var /= width; for (int c = 0; c < width; c++) ref[i * width + c] = (v[c] - mean) / sqrt(var + 1e-12) * g[c] + b[c]; }
        launch(minilm_add_layer_norm, rows, 128, P(x.data()), res ? P(r.data()) : 0ull, P(g.data()), P(b.data()), P(x.data()), (U)width, bits(1e-12f));
        char name[64]; snprintf(name, 64, "layernorm w=%d res=%d (in place)", width, res); check(name, maxdiff(x, ref), 1e-4);
    }
    // attention
    int ashapes[][2] = {{12, 32}, {2, 48}, {1, 8}};
    for (auto &s : ashapes) {
        int heads = s[0], hd = s[1], hidden = heads * hd; std::vector<int> lens = {1, 7, 13, 10}; int batch = 4, L = 13, rows = batch * L, stride = 3 * hidden;
        auto qkv = rnd(rows * stride, 1); std::vector<float> out(rows * hidden, -7), ref(rows * hidden);
        for (int b = 0; b < batch; b++) for (int h = 0; h < heads; h++) for (int i = 0; i < L; i++) {
            std::vector<double> p(lens[b]); double mx = -1e30, sum = 0;
            for (int j = 0; j < lens[b]; j++) { double s2 = 0; for (int d = 0; d < hd; d++) s2 += qkv[(b * L + i) * stride + h * hd + d] * qkv[(b * L + j) * stride + hidden + h * hd + d]; p[j] = s2 / sqrt((double)hd); mx = std::max(mx, p[j]); }
            for (auto &v : p) { v = exp(v - mx); sum += v; }
            for (int d = 0; d < hd; d++) { double acc = 0; for (int j = 0; j < lens[b]; j++) acc += p[j] * qkv[(b * L + j) * stride + 2 * hidden + h * hd + d]; ref[(b * L + i) * hidden + h * hd + d] = acc / sum; }
        }
        int qBlocks = (L + 3) / 4;
        launch(minilm_attention, batch * heads * qBlocks, 128, P(qkv.data()), P(lens.data()), (U)L, (U)heads, (U)hd, bits((float)(1 / sqrt((double)hd))), P(out.data()));
        char name[64]; snprintf(name, 64, "attention heads=%d hd=%d", heads, hd); check(name, maxdiff(out, ref), 1e-4);
    }
    // pooling
    {
        std::vector<int> lens = {1, 5, 12}; int batch = 3, L = 12, width = 384; auto hid = rnd(batch * L * width, 2);
        std::vector<float> out(batch * width, -7), ref(batch * width);
        for (int b = 0; b < batch; b++) { std::vector<double> m(width); double nn = 0; for (int c = 0; c < width; c++) { for (int i = 0; i < lens[b]; i++) m[c] += hid[(b * L + i) * width + c]; m[c] /= lens[b]; nn += m[c] * m[c]; } nn = sqrt(nn); for (int c = 0; c < width; c++) ref[b * width + c] = m[c] / nn; }
        launch(minilm_mean_pool_normalize, batch, 128, P(hid.data()), P(lens.data()), (U)L, (U)width, P(out.data()));
        check("mean pool + normalize", maxdiff(out, ref), 1e-5);
    }
    // embeddings
    {
        int vocab = 50, hidden = 16, batch = 2, L = 5, rows = batch * L; auto word = rnd(vocab * hidden, 1), pos = rnd(L * hidden, 1), type = rnd(hidden, 1);
        std::vector<int> ids(rows); for (auto &i : ids) i = rng() % vocab; std::vector<float> out(rows * hidden), ref(rows * hidden);
        for (int r = 0; r < rows; r++) for (int c = 0; c < hidden; c++) ref[r * hidden + c] = word[ids[r] * hidden + c] + pos[(r % L) * hidden + c] + type[c];
        launch(minilm_embeddings, 1, 256, P(ids.data()), (U)rows, (U)L, (U)hidden, P(word.data()), P(pos.data()), P(type.data()), P(out.data()));
        check("embeddings", maxdiff(out, ref), 1e-6);
    }
    printf("%d failures\n", fails);
    return fails != 0;
}
