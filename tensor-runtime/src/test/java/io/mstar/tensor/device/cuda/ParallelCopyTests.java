package io.mstar.tensor.device.cuda;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;

import io.mstar.testing.Seeds;

import static org.assertj.core.api.Assertions.assertThat;

/** The staging copy splits over threads and must still copy every byte to the right place. */
class ParallelCopyTests {

    @Test
    void copiesEveryByteAtTheBuffersPositionsWhateverTheSplit() {
        long seed = Seeds.of("ParallelCopyTests");
        Random random = new Random(seed);
        try (ParallelCopy copy = new ParallelCopy(4, "test")) {
            for (int len : new int[] {0, 1, 4095, ParallelCopy.MIN_PART - 1, 3 * ParallelCopy.MIN_PART + 7, 9 << 20}) {
                byte[] bytes = new byte[len + 13];
                random.nextBytes(bytes);
                ByteBuffer src = ByteBuffer.wrap(bytes).position(5).limit(5 + len);
                ByteBuffer dst = ByteBuffer.allocateDirect(len + 20).position(11);

                copy.copy(src, dst);

                assertThat(src.position()).isEqualTo(5);
                assertThat(dst.position()).isEqualTo(11);
                byte[] out = new byte[len];
                dst.get(out);
                byte[] expected = java.util.Arrays.copyOfRange(bytes, 5, 5 + len);
                assertThat(out).as("len %d, seed %d", len, seed).isEqualTo(expected);
            }
        }
    }
}
