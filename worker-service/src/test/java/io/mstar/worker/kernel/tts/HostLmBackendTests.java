package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.worker.kv.KvCache;

/**
 * The host transformer over the real paged KV cache: the K/V a call writes and a later call reads back through its
 * page table must be exactly what one call computing the whole sequence keeps, whatever the chunking and wherever
 * the pages lie; and the weights are a pure function of the seed.
 */
class HostLmBackendTests {

    static final int PAGE = 4;

    @Test
    void feedingInRandomChunksOverScatteredPagesGivesExactlyTheLogitsOfOneCall() {
        long seed = Seeds.of("HostLmBackendTests");
        Random random = new Random(seed);
        HostLmBackend backend = new HostLmBackend(ToyTtsWeights.generate());
        int[] seq = new int[30];
        seq[0] = ToyTtsModel.BOS;
        for (int i = 1; i < seq.length; i++) {
            seq[i] = random.nextInt(ToyTtsModel.BYTES);
        }
        try (HostDevice device = new HostDevice("host", 16 << 20)) {
            KvCache whole = new KvCache(device, new KvCacheConfig(PAGE, 64), ToyTtsWeights.BYTES_PER_TOKEN);
            whole.addRequest("r");
            int first = whole.appendTokens("r", seq.length);
            float[] once = backend.run(device, whole.pool(), whole.layout(),
                    List.of(new LmJob(seq, first, whole.pages("r"), true)))[0];

            KvCache paged = new KvCache(device, new KvCacheConfig(PAGE, 64), ToyTtsWeights.BYTES_PER_TOKEN);
            paged.addRequest("r");
            paged.addRequest("other");
            int at = 0;
            float[] last = null;
            List<Integer> chunks = new ArrayList<>();
            while (at < seq.length) {
                paged.appendTokens("other", 1 + random.nextInt(PAGE)); // interleaved pages: r's are scattered
                int n = Math.min(seq.length - at, 1 + random.nextInt(5));
                chunks.add(n);
                int pos = paged.appendTokens("r", n);
                assertThat(pos).isEqualTo(at);
                last = backend.run(device, paged.pool(), paged.layout(), List.of(
                        new LmJob(Arrays.copyOfRange(seq, at, at + n), pos, paged.pages("r"), true)))[0];
                at += n;
            }
            assertThat(paged.pages("r")).as("pages not contiguous").isNotEqualTo(
                    java.util.stream.IntStream.range(0, paged.pages("r").length).toArray());
            assertThat(last).as("chunks %s", chunks).containsExactly(once);
            assertThat(last[ToyTtsModel.BOS]).isEqualTo(Float.NEGATIVE_INFINITY);

            int[] other = seq.clone();
            other[3] ^= 1;
            whole.addRequest("changed");
            int p = whole.appendTokens("changed", other.length);
            float[] changed = backend.run(device, whole.pool(), whole.layout(),
                    List.of(new LmJob(other, p, whole.pages("changed"), true)))[0];
            assertThat(changed).as("an earlier token matters").isNotEqualTo(once);
            whole.close();
            paged.close();
            assertThat(device.stats().bytesInUse()).isZero();
        }
    }

    @Test
    void weightsAreAPureFunctionOfTheSeed() {
        ToyTtsWeights a = ToyTtsWeights.generate();
        ToyTtsWeights b = ToyTtsWeights.generate();
        assertThat(a.values()).containsExactly(b.values());
        assertThat(a.values()).hasSize(ToyTtsWeights.layout().total());
        float[] embedding = Arrays.copyOfRange(a.values(), 0, ToyTtsWeights.VOCAB * ToyTtsWeights.D);
        for (float v : embedding) {
            assertThat(v).isBetween(-1f, 1f);
        }
        assertThat(new java.util.HashSet<>(java.util.stream.IntStream.range(0, 100)
                .mapToObj(i -> embedding[i]).toList())).as("not constant").hasSizeGreaterThan(90);
    }
}
