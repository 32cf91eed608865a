package io.mstar.worker.kernel.tts;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

import io.mstar.model.ToyTtsModel;

class ToyTtsSynthTests {

    static final int N = ToyTtsModel.SAMPLES_PER_TOKEN;

    @Test
    void windowsWithLeftContextJoinIntoTheWholeStream() {
        int[] bytes = "hello, world: windows join".chars().toArray();
        short[] whole = ToyTtsSynth.stream(bytes);
        assertThat(whole).hasSize(bytes.length * N);
        // the codec's cut: 8 fresh, then 4 context + 4 fresh, ..., the last short
        int w = ToyTtsModel.CODEC_WINDOW;
        int s = ToyTtsModel.CODEC_STRIDE;
        short[] joined = ToyTtsSynth.window(Arrays.copyOf(bytes, w), 0);
        for (int start = w; start < bytes.length; start += s) {
            int end = Math.min(bytes.length, start + s);
            short[] part = ToyTtsSynth.window(Arrays.copyOfRange(bytes, start - (w - s), end), w - s);
            assertThat(part).hasSize((end - start) * N);
            short[] grown = Arrays.copyOf(joined, joined.length + part.length);
            System.arraycopy(part, 0, grown, joined.length, part.length);
            joined = grown;
        }
        assertThat(joined).containsExactly(whole);
    }

    @Test
    void aTokenIsSilentAtItsEdgesAndItsPitchGlidesFromThePreviousOne() {
        short[] alone = new short[N];
        short[] afterLow = new short[N];
        ToyTtsSynth.token(ToyTtsSynth.NONE, 'z', alone, 0);
        ToyTtsSynth.token(' ', 'z', afterLow, 0);
        assertThat((int) alone[0]).isZero();
        assertThat(Math.abs((int) alone[N - 1])).isLessThan(50);
        assertThat(alone).isNotEqualTo(afterLow);
        int peak = 0;
        for (short v : alone) {
            peak = Math.max(peak, Math.abs(v));
        }
        assertThat(peak).isBetween(4000, (int) Short.MAX_VALUE);
        // different bytes, different sound
        short[] other = new short[N];
        ToyTtsSynth.token(ToyTtsSynth.NONE, 'a', other, 0);
        assertThat(other).isNotEqualTo(alone);
    }
}
