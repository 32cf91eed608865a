package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.mstar.request.SamplingConfig;
import io.mstar.tensor.collective.HostStagedCollective;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.device.HostDevice;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.kernel.tts.cuda.CudaTensorParallelLmBackend;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.tp.RankGroups;
import io.mstar.worker.tp.ThreadRanks;
import io.mstar.worker.tp.TensorParallelSampling;

/**
 * The toy-tts lm's tensor-parallel CUDA kernels on GPU 0: one rank holding the whole model against the host reference
 * (the CUDA tolerance of docs/toy-tts.md), and groups of 2 and 4 ranks (threads, each with its own {@link CudaDevice}
 * and KV pool, meeting through shared memory staged through the host, as ranks sharing one GPU do) against that one
 * rank, bit for bit: the kernels sum in one order at every tp_size. The NCCL path between GPUs is the same backend
 * with another collective. Fails, rather than skips, without a GPU or the PTX.
 */
@Tag("gpu")
class CudaTensorParallelLmGpuTests {

    private static final int STEPS = 96;

    @RegisterExtension
    final RankGroups groups = new RankGroups();

    @Test
    void oneRankHoldingTheWholeModelDecodesTheReferencesTokensWithinTheCudaTolerance() {
        requirePtx();
        LockstepDecode decode = TensorParallelLmTests.decode(Seeds.of("CudaTensorParallelLmGpuTests.whole"),
                TensorParallelLmTests.GREEDY, STEPS);
        LockstepDecode.Trace host;
        try (HostDevice device = new HostDevice("host", 64L << 20);
                KvCache cache = new KvCache(device, TensorParallelLmTests.cacheFor(decode),
                        ToyTtsWeights.BYTES_PER_TOKEN)) {
            host = decode.run(new HostLmBackend(TensorParallelLmTests.WEIGHTS), device, cache,
                    LockstepDecode::drawHere);
        }
        LockstepDecode.Trace gpu = whole(decode);
        for (int s = 0; s < STEPS; s++) {
            assertThat(gpu.tokens()[s]).as("step %d: tokens", s).containsExactly(host.tokens()[s]);
            for (int j = 0; j < gpu.logits()[s].length; j++) {
                assertThat(gpu.logits()[s][j]).as("step %d, request %d: logits", s, j)
                        .containsExactly(host.logits()[s][j], within(2e-3f));
            }
        }
    }

    @Test
    void twoRanksOnOneGpuDecodeGreedilyTheWholeModelsTokensAndLogitBits() throws Exception {
        agree("greedy", TensorParallelLmTests.GREEDY, 2);
    }

    @Test
    void twoRanksOnOneGpuSampleTheWholeModelsTokensAndLogitBits() throws Exception {
        agree("sampled", TensorParallelLmTests.SAMPLED, 2);
    }

    @Test
    void fourRanksOnOneGpuDecodeGreedilyTheWholeModelsTokensAndLogitBits() throws Exception {
        agree("fourRanks", TensorParallelLmTests.GREEDY, 4);
    }

    private void agree(String test, SamplingConfig sampling, int size) throws Exception {
        requirePtx();
        LockstepDecode decode = TensorParallelLmTests.decode(Seeds.of("CudaTensorParallelLmGpuTests." + test),
                sampling, STEPS);
        LockstepDecode.Trace one = whole(decode);
        ThreadRanks ranks = groups.of(size, Duration.ofSeconds(30));
        List<LockstepDecode.Trace> group = ranks.run((c, host) -> rank(c, host, decode));
        for (int r = 0; r < size; r++) {
            for (int s = 0; s < STEPS; s++) {
                assertThat(group.get(r).tokens()[s]).as("step %d: tokens of rank %d", s, r)
                        .containsExactly(one.tokens()[s]);
                for (int j = 0; j < one.logits()[s].length; j++) {
                    assertThat(TensorParallelLmTests.bits(group.get(r).logits()[s][j])).as("step %d, request %d: rank %d's logit bits", s,
                            j, r).containsExactly(TensorParallelLmTests.bits(one.logits()[s][j]));
                }
            }
        }
    }

    private static LockstepDecode.Trace whole(LockstepDecode decode) {
        try (CudaDevice gpu = new CudaDevice(0)) {
            LockstepDecode.Trace trace;
            try (CudaTensorParallelLmBackend lm = CudaTensorParallelLmBackend.whole(gpu, TensorParallelLmTests.WEIGHTS);
                    KvCache cache = new KvCache(gpu, TensorParallelLmTests.cacheFor(decode), lm.bytesPerToken())) {
                trace = decode.run(lm, gpu, cache, LockstepDecode::drawHere);
            }
            assertThat(gpu.stats().bytesInUse()).as("device bytes after the run").isZero();
            return trace;
        }
    }

    /** A rank: its own device on GPU 0, the group's shared-memory collective staged through its host device. */
    private static LockstepDecode.Trace rank(SharedMemoryCollective c, HostDevice host, LockstepDecode decode) {
        TensorParallelSampling sampling = new TensorParallelSampling(c, host);
        try (CudaDevice gpu = new CudaDevice(0)) {
            LockstepDecode.Trace trace;
            // closing it closes c too, which the group's owner closes again (idempotent) after the rank's body
            try (HostStagedCollective staged = new HostStagedCollective(c, host, gpu);
                    CudaTensorParallelLmBackend lm = CudaTensorParallelLmBackend.rank(gpu, TensorParallelLmTests.WEIGHTS,
                    staged); KvCache cache = new KvCache(gpu, TensorParallelLmTests.cacheFor(decode),
                            lm.bytesPerToken())) {
                trace = decode.run(lm, gpu, cache, (logits, steps, generated) -> sampling.sample(logits,
                        (j, row) -> ToyTtsLmKernel.draw(steps.get(j), generated, row)));
            }
            assertThat(gpu.stats().bytesInUse()).as("device bytes of rank %d after the run", c.rank()).isZero();
            return trace;
        }
    }

    private static void requirePtx() {
        if (!CudaTensorParallelLmBackend.available()) {
            throw new IllegalStateException(CudaTensorParallelLmBackend.unavailableReason().orElseThrow());
        }
    }
}
