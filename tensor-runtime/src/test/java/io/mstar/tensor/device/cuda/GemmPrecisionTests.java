package io.mstar.tensor.device.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.mstar.testing.Seeds;

/** BF16 rounding on the host, as minilm's BF16 weights are made: to nearest, ties to even, NaN kept. No GPU. */
class GemmPrecisionTests {

    private static final long SEED = Seeds.of("GemmPrecisionTests");

    @Test
    void exactValuesAndTiesRoundAsIeeeSays() {
        assertThat(GemmPrecision.bf16(1f)).isEqualTo((short) 0x3f80);
        assertThat(GemmPrecision.bf16(-2f)).isEqualTo((short) 0xc000);
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8 halfway above odd: up
        assertThat(GemmPrecision.bf16(1f + 0x1p-8f)).isEqualTo((short) 0x3f80);
        assertThat(GemmPrecision.bf16(1f + 3 * 0x1p-8f)).isEqualTo((short) 0x3f82);
        assertThat(GemmPrecision.bf16(Float.MAX_VALUE)).isEqualTo((short) 0x7f80);  // beyond BF16's largest: infinity
        assertThat(Float.isNaN(widen(GemmPrecision.bf16(Float.NaN)))).isTrue();
        assertThat(Float.isNaN(widen(GemmPrecision.bf16(Float.intBitsToFloat(0x7f800001))))).as("a NaN whose payload "
                + "sits in the low bits").isTrue();
    }

    @Test
    void everyRandomFloatGoesToTheNearerNeighbour() {
        SplittableRandom random = new SplittableRandom(SEED);
        for (int i = 0; i < 200_000; i++) {
            float v = Float.intBitsToFloat(random.nextInt());
            if (Float.isNaN(v) || Float.isInfinite(v)) {
                continue;
            }
            int bits = Float.floatToRawIntBits(v);
            float down = Float.intBitsToFloat(bits & 0xffff0000);
            float up = Float.intBitsToFloat((bits & 0xffff0000) + 0x10000);
            float got = widen(GemmPrecision.bf16(v));
            double dDown = Math.abs((double) v - down);
            // past BF16's largest the upper neighbour is infinity, which IEEE places at 2^128 for rounding
            double upValue = Float.isInfinite(up) ? Math.copySign(0x1p128, v) : up;
            double dUp = Math.abs(upValue - v);
            float want = dDown < dUp ? down : dUp < dDown ? up : ((bits >>> 16) & 1) == 0 ? down : up;
            assertThat(got).as("bf16 of %s (bits %08x), seed %d", v, bits, SEED).isEqualTo(want);
        }
    }

    private static float widen(short bf16) {
        return Float.intBitsToFloat((bf16 & 0xffff) << 16);
    }
}
