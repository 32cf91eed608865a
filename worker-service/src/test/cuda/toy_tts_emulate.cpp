// Runs toy_tts_kernels.cu on the CPU, without a GPU (cuda_emulation.h: a block's threads as std::threads, as many
// as the kernel's block). Reads dump.bin (ToyTtsKernelDump.java: the weights, three requests with interleaved pages,
// the Java logits after the prefill and after the decode step), runs a prefill launch and a decode launch over one
// paged pool, and prints each launch's largest logit difference. Checks the kernel's logic and layout only, not GPU
// limits or timing. See docs/toy-tts.md.
#include <cstdio>
#include "cuda_emulation.h"
#include "../../main/cuda/toy_tts_kernels.cu"

static int rd(FILE *f) { int v; fread(&v, 4, 1, f); return v; }

int main() {
    FILE *f = fopen("dump.bin", "rb");
    int n = rd(f);
    std::vector<float> w(n);
    fread(w.data(), 4, n, f);
    long long total = 0;
    launch(toy_tts_layout_total, 1, 1, (u64)&total);
    printf("layout total cuda %lld java %d\n", total, n);
    int jobs = rd(f);
    std::vector<std::vector<int>> seqs(jobs), pages(jobs);
    std::vector<std::vector<float>> expect[2];
    expect[0] = expect[1] = std::vector<std::vector<float>>(jobs, std::vector<float>(TTS_VOCAB));
    int pageCount = 0;
    for (int j = 0; j < jobs; j++) {
        int len = rd(f); seqs[j].resize(len); fread(seqs[j].data(), 4, len, f);
        int np = rd(f); pages[j].resize(np); fread(pages[j].data(), 4, np, f);
        fread(expect[0][j].data(), 4, TTS_VOCAB, f);
        fread(expect[1][j].data(), 4, TTS_VOCAB, f);
        for (int p : pages[j]) pageCount = std::max(pageCount, p + 1);
    }
    int pageSize = 4;
    std::vector<char> pool((size_t)pageCount * pageSize * TTS_SLOT_FLOATS * 4);
    bool pass = true;
    for (int phase = 0; phase < 2; phase++) {
        std::vector<int> table, toks, pt;
        for (int j = 0; j < jobs; j++) {
            int len = seqs[j].size();
            int first = phase == 0 ? 0 : len - 1;
            int count = phase == 0 ? len - 1 : 1;
            table.push_back(toks.size()); table.push_back(count); table.push_back(first);
            table.push_back(pt.size()); table.push_back(j);
            for (int t = first; t < first + count; t++) toks.push_back(seqs[j][t]);
            for (int p : pages[j]) pt.push_back(p);
        }
        std::vector<float> logits(jobs * TTS_VOCAB, 0.f);
        launch(toy_tts_forward, jobs, TTS_FORWARD_THREADS, (u64)w.data(), (u64)pool.data(), (u64)table.data(),
               (u64)toks.data(), (u64)pt.data(), (u64)logits.data(), (u64)pageSize);
        float worst = 0;
        for (int j = 0; j < jobs; j++)
            for (int v = 0; v < TTS_VOCAB; v++) {
                float a = logits[j * TTS_VOCAB + v], b = expect[phase][j][v];
                if (std::isinf(a) && std::isinf(b)) continue;
                float d = fabsf(a - b);
                if (!(d <= worst)) worst = d; // a NaN logit too (fmaxf would drop it)
            }
        printf("%s: max |emulated cuda - java| logit difference = %g\n", phase == 0 ? "prefill" : "decode", worst);
        pass = pass && worst <= 2e-3f;
    }
    return pass ? 0 : 1;
}
