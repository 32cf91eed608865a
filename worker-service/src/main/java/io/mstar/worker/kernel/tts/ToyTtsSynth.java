package io.mstar.worker.kernel.tts;

import io.mstar.model.ToyTtsModel;

/**
 * The toy codec's synthesis (docs/toy-tts.md): each text token becomes {@value ToyTtsModel#SAMPLES_PER_TOKEN}
 * samples (20 ms at 16 kHz) of a tone whose pitch, loudness and timbre derive from its byte; its pitch glides
 * from the previous token's pitch over the first {@value #GLIDE} samples, and the previous token is taken from the
 * window's left context when the token opens a window, so consecutive chunks join as if synthesised in one go.
 * Pure function of (previous byte or none, byte); {@link StrictMath} keeps it bit-exact on every JVM.
 *
 * <ul>
 *   <li>pitch {@code f(b) = 55 * 2^(b/40)} Hz (space 95 Hz, 'a' 295 Hz, 'z' 456 Hz, byte 255 4.5 kHz);</li>
 *   <li>glide: the first {@value #GLIDE} samples go linearly from {@code f(prev)} to {@code f(b)}
 *       ({@code f(b)} throughout for the stream's first token);</li>
 *   <li>phase starts at 0 for every token and integrates the frequency sample by sample;</li>
 *   <li>sample {@code = round(A(b) * env * (sin(phase) + 0.3 sin(2 phase)))}, clamped to int16, with
 *       {@code A(b) = 6000 + 40 * (b & 63)} and a raised-cosine envelope rising over the first and falling over
 *       the last {@value #EDGE} samples (so a token starts and ends at silence: no clicks at joins).</li>
 * </ul>
 */
public final class ToyTtsSynth {

    /** No previous token: the stream's first one. */
    public static final int NONE = -1;
    static final int GLIDE = 80;
    static final int EDGE = 32;

    private ToyTtsSynth() {
    }

    static double pitch(int b) {
        return 55.0 * StrictMath.pow(2.0, b / 40.0);
    }

    /** Writes the token's samples into {@code out[at, at + SAMPLES_PER_TOKEN)}. */
    public static void token(int previous, int b, short[] out, int at) {
        int n = ToyTtsModel.SAMPLES_PER_TOKEN;
        double target = pitch(b);
        double start = previous == NONE ? target : pitch(previous);
        double amplitude = 6000 + 40 * (b & 63);
        double phase = 0;
        for (int i = 0; i < n; i++) {
            double f = i < GLIDE ? start + (target - start) * i / GLIDE : target;
            double env = 1;
            if (i < EDGE) {
                env = 0.5 - 0.5 * StrictMath.cos(StrictMath.PI * i / EDGE);
            } else if (i >= n - EDGE) {
                env = 0.5 - 0.5 * StrictMath.cos(StrictMath.PI * (n - 1 - i) / EDGE);
            }
            double s = amplitude * env * (StrictMath.sin(phase) + 0.3 * StrictMath.sin(2 * phase));
            long v = Math.round(s);
            out[at + i] = (short) Math.max(Short.MIN_VALUE, Math.min(Short.MAX_VALUE, v));
            phase += 2 * StrictMath.PI * f / ToyTtsModel.SAMPLE_RATE;
        }
    }

    /**
     * PCM of a codec window: {@code bytes[context..]} are the fresh tokens, {@code bytes[0, context)} the left
     * context (only its last token matters); a window without context opens the stream (its first token has no
     * previous token).
     */
    public static short[] window(int[] bytes, int context) {
        int fresh = bytes.length - context;
        short[] out = new short[fresh * ToyTtsModel.SAMPLES_PER_TOKEN];
        for (int j = 0; j < fresh; j++) {
            int i = context + j;
            token(i == 0 ? NONE : bytes[i - 1], bytes[i], out, j * ToyTtsModel.SAMPLES_PER_TOKEN);
        }
        return out;
    }

    /** The PCM of a whole stream of tokens, as the chunks joined give it (tests and the e2e oracle). */
    public static short[] stream(int[] bytes) {
        return window(bytes, 0);
    }
}
