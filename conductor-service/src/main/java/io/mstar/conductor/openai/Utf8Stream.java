package io.mstar.conductor.openai;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Incremental UTF-8 decoding of a byte stream that arrives in arbitrary pieces: {@link #feed} returns the text of
 * every complete character so far and keeps an incomplete trailing sequence (at most 3 bytes) for the next piece,
 * so a multi-byte character split across chunks is never emitted as two broken halves. Malformed bytes become
 * U+FFFD as in {@code new String(bytes, UTF_8)}; {@link #finish} turns a sequence still incomplete at the end into
 * U+FFFD. One instance per stream; not thread-safe (a stream is mapped on one subscriber at a time).
 */
public final class Utf8Stream {

    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE).onUnmappableCharacter(CodingErrorAction.REPLACE);
    /** Bytes not yet decoded: an incomplete sequence left from the last piece, then the new piece. */
    private ByteBuffer pending = ByteBuffer.allocate(0);

    /** Decodes {@code bytes}; returns the complete characters (possibly empty). */
    public String feed(byte[] bytes) {
        ByteBuffer in = ByteBuffer.allocate(pending.remaining() + bytes.length);
        in.put(pending).put(bytes).flip();
        CharBuffer out = CharBuffer.allocate(in.remaining() + 1);
        decoder.decode(in, out, false);
        pending = in.slice();
        return out.flip().toString();
    }

    /** Ends the stream: whatever is still incomplete becomes U+FFFD. */
    public String finish() {
        CharBuffer out = CharBuffer.allocate(pending.remaining() + 2);
        decoder.decode(pending, out, true);
        decoder.flush(out);
        pending = ByteBuffer.allocate(0);
        return out.flip().toString();
    }

    /** Bytes held back waiting for the rest of a character. */
    public int pendingBytes() {
        return pending.remaining();
    }
}
