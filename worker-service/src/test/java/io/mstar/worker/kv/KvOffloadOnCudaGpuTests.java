package io.mstar.worker.kv;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Random;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.testing.Seeds;

/**
 * Offload and reload on GPU 0 (docs/streaming-and-kv.md#offload-and-reload): the host pool is page-locked, pages go
 * there and back by DMA, and after a reload onto other device pages every byte of every position is what was written
 * before the offload; the pinned pool and the device pool are freed at close. Fails, rather than skips, without a GPU.
 */
@Tag("gpu")
class KvOffloadOnCudaGpuTests {

    @Test
    void pagesComeBackFromThePinnedHostPoolByteForByte() {
        long seed = Seeds.of("KvOffloadOnCudaGpuTests");
        Random random = new Random(seed);
        try (CudaDevice gpu = new CudaDevice(0)) {
            long bytesPerToken = 1024; // toy-tts's two layers of K and V
            KvCache cache = new KvCache(gpu, new KvCacheLayout(16, 8, bytesPerToken), 8);
            cache.addRequest("a");
            cache.appendTokens("a", 40); // 3 pages
            byte[] written = new byte[40 * (int) bytesPerToken];
            random.nextBytes(written);
            for (int p = 0; p < 40; p++) {
                gpu.copyFromHost(ByteBuffer.wrap(written, p * (int) bytesPerToken, (int) bytesPerToken), cache.pool(),
                        cache.slot("a", p).byteOffset());
            }
            long stagedBefore = gpu.stagedBytes();
            long movedBefore = gpu.movedBytes();

            assertThat(cache.offload("a")).isTrue();
            cache.addRequest("b");
            cache.appendTokens("b", 96); // 6 of the 8 pages: the 3 freed ones among them
            assertThat(cache.reload("a")).as("2 of 8 pages free, 3 needed").isFalse();
            cache.releaseRequest("b");
            assertThat(cache.reload("a")).isTrue();

            assertThat(gpu.movedBytes() - movedBefore).as("both moves on the copy stream, from and to pinned pages")
                    .isEqualTo(2L * 3 * 16 * bytesPerToken);
            assertThat(gpu.stagedBytes()).as("nothing staged").isEqualTo(stagedBefore);
            byte[] read = new byte[written.length];
            for (int p = 0; p < 40; p++) {
                ByteBuffer one = ByteBuffer.allocateDirect((int) bytesPerToken);
                gpu.copyToHost(cache.pool(), cache.slot("a", p).byteOffset(), one);
                one.get(read, p * (int) bytesPerToken, (int) bytesPerToken);
            }
            assertThat(read).as("every byte after the reload (seed %d)", seed).isEqualTo(written);
            cache.releaseRequest("a");
            assertThat(cache.hostStats().pagesInUse()).isZero();
            cache.close();
            assertThat(gpu.stats().bytesInUse()).isZero();
        }
    }

    /**
     * The copy stream: an offload and a reload return while the compute stream is still busy with 32 GiB of memset
     * issued before them (milliseconds of work, against microseconds for three pages), so a move does not wait behind a
     * running step; the bytes still come back exact.
     */
    @Test
    void movesRunBesideTheComputeStreamsWork() {
        try (CudaDevice gpu = new CudaDevice(0)) {
            long bytesPerToken = 1024;
            KvCache cache = new KvCache(gpu, new KvCacheLayout(16, 8, bytesPerToken), 8);
            cache.addRequest("a");
            cache.appendTokens("a", 48);
            byte[] written = new byte[48 * (int) bytesPerToken];
            new Random(7).nextBytes(written);
            gpu.copyFromHost(ByteBuffer.wrap(written, 0, 16 * (int) bytesPerToken), cache.pool(),
                    cache.slot("a", 0).byteOffset());
            var big = gpu.allocate(8L << 30);
            try {
                int overlapped = 0;
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < 4; i++) {
                        gpu.zero(big, 0, 8L << 30);
                    }
                    try (var busy = gpu.recordEvent()) {
                        assertThat(cache.offload("a")).isTrue();
                        assertThat(cache.reload("a")).isTrue();
                        overlapped += busy.isComplete() ? 0 : 1;
                    }
                    gpu.synchronize();
                }
                assertThat(overlapped).as("rounds whose moves returned before the compute stream's work ended")
                        .isEqualTo(3);
            } finally {
                gpu.free(big);
            }
            ByteBuffer page = ByteBuffer.allocateDirect(16 * (int) bytesPerToken);
            gpu.copyToHost(cache.pool(), cache.slot("a", 0).byteOffset(), page);
            byte[] read = new byte[page.capacity()];
            page.get(read);
            assertThat(read).isEqualTo(java.util.Arrays.copyOf(written, read.length));
            cache.close();
            assertThat(gpu.stats().bytesInUse()).isZero();
        }
    }
}
