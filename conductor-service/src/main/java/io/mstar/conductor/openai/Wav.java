package io.mstar.conductor.openai;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The 44-byte RIFF/WAVE header of 16-bit little-endian PCM ({@code fmt } chunk of 16 bytes, format 1). A streamed
 * file does not know its length when the header goes out, so its RIFF and data sizes are 0xFFFFFFFF, as common
 * streaming TTS servers write them; players read such a file to its end.
 */
public final class Wav {

    public static final int HEADER_BYTES = 44;
    public static final int BITS_PER_SAMPLE = 16;
    /** The RIFF and data size of a streamed file. */
    public static final long UNKNOWN_SIZE = 0xFFFFFFFFL;

    private Wav() {
    }

    /** The header of a file of exactly {@code dataBytes} bytes of samples. */
    public static byte[] header(int sampleRate, int channels, long dataBytes) {
        if (dataBytes < 0 || dataBytes > UNKNOWN_SIZE - 36) {
            throw new IllegalArgumentException("WAV data size out of range: " + dataBytes);
        }
        return header(sampleRate, channels, 36 + dataBytes, dataBytes);
    }

    /** The header of a streamed file: both sizes 0xFFFFFFFF. */
    public static byte[] streamingHeader(int sampleRate, int channels) {
        return header(sampleRate, channels, UNKNOWN_SIZE, UNKNOWN_SIZE);
    }

    private static byte[] header(int sampleRate, int channels, long riffSize, long dataSize) {
        if (sampleRate < 1 || channels < 1 || channels > 64) {
            throw new IllegalArgumentException("bad WAV format: " + sampleRate + " Hz, " + channels + " channels");
        }
        int blockAlign = channels * BITS_PER_SAMPLE / 8;
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put("RIFF".getBytes(StandardCharsets.US_ASCII)).putInt((int) riffSize);
        b.put("WAVE".getBytes(StandardCharsets.US_ASCII));
        b.put("fmt ".getBytes(StandardCharsets.US_ASCII)).putInt(16);
        b.putShort((short) 1).putShort((short) channels).putInt(sampleRate).putInt(sampleRate * blockAlign)
                .putShort((short) blockAlign).putShort((short) BITS_PER_SAMPLE);
        b.put("data".getBytes(StandardCharsets.US_ASCII)).putInt((int) dataSize);
        return b.array();
    }
}
