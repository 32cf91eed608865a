package io.mstar.conductor.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class WavTests {

    /** The fields of a canonical 44-byte PCM header, parsed back. */
    record Parsed(String riff, long riffSize, String wave, String fmt, int fmtSize, int format, int channels,
            int sampleRate, int byteRate, int blockAlign, int bits, String data, long dataSize) {

        static Parsed of(byte[] header) {
            ByteBuffer b = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
            return new Parsed(ascii(b), b.getInt() & 0xffffffffL, ascii(b), ascii(b), b.getInt(), b.getShort(),
                    b.getShort(), b.getInt(), b.getInt(), b.getShort(), b.getShort(), ascii(b), b.getInt() & 0xffffffffL);
        }

        private static String ascii(ByteBuffer b) {
            byte[] four = new byte[4];
            b.get(four);
            return new String(four, StandardCharsets.US_ASCII);
        }
    }

    @Test
    void anExactHeaderCarriesEveryFieldAndTheExactSizes() {
        byte[] header = Wav.header(16000, 1, 3200);
        assertThat(header).hasSize(44);
        assertThat(Parsed.of(header)).isEqualTo(new Parsed("RIFF", 36 + 3200, "WAVE", "fmt ", 16, 1, 1, 16000,
                32000, 2, 16, "data", 3200));
        assertThat(Parsed.of(Wav.header(24000, 2, 0))).isEqualTo(new Parsed("RIFF", 36, "WAVE", "fmt ", 16, 1, 2,
                24000, 96000, 4, 16, "data", 0));
    }

    @Test
    void aStreamingHeaderHasBothSizesAtTheMaximum() {
        assertThat(Parsed.of(Wav.streamingHeader(16000, 1))).isEqualTo(new Parsed("RIFF", 0xFFFFFFFFL, "WAVE", "fmt ",
                16, 1, 1, 16000, 32000, 2, 16, "data", 0xFFFFFFFFL));
    }

    @Test
    void impossibleFormatsAndSizesAreRefused() {
        assertThatThrownBy(() -> Wav.header(0, 1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Wav.header(16000, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Wav.header(16000, 1, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Wav.header(16000, 1, 0xFFFFFFFFL)).isInstanceOf(IllegalArgumentException.class);
        assertThat(Parsed.of(Wav.header(16000, 1, 0xFFFFFFFFL - 36)).riffSize()).isEqualTo(0xFFFFFFFFL);
    }
}
