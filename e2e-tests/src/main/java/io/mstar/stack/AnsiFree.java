package io.mstar.stack;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;

/**
 * Output of the launcher without terminal escape sequences: {@code bin/mstar up} is read in CI logs and piped into
 * files, and an {@code ESC[0m} there is noise (or, in a log tail quoted from a service, colour that only a terminal
 * understands). Drops {@code ESC [ parameters final-byte} (CSI: colours, cursor moves) and any other two-byte
 * {@code ESC x} sequence; everything else, carriage returns included, passes.
 */
final class AnsiFree {

    private static final int ESC = 0x1b;

    private AnsiFree() {
    }

    /** {@code text} without escape sequences. */
    static String strip(String text) {
        if (text.indexOf(ESC) < 0) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        Filter filter = new Filter();
        text.chars().forEach(c -> {
            if (filter.keeps(c)) {
                out.append((char) c);
            }
        });
        return out.toString();
    }

    /** {@code text} without escape sequences and without control characters other than newline and tab. */
    static String plain(String text) {
        String stripped = strip(text);
        StringBuilder out = new StringBuilder(stripped.length());
        stripped.chars().filter(c -> c == '\n' || c == '\t' || !Character.isISOControl(c))
                .forEach(c -> out.append((char) c));
        return out.toString();
    }

    /** A print stream onto {@code target} that drops every escape sequence written to it. */
    static PrintStream wrap(PrintStream target) {
        return new PrintStream(new StrippingStream(target), true, Charset.defaultCharset());
    }

    /** Byte-wise: ESC never occurs inside a UTF-8 multi-byte sequence, so the bytes of other characters pass intact. */
    private static final class StrippingStream extends FilterOutputStream {
        private final Filter filter = new Filter();

        StrippingStream(OutputStream target) {
            super(target);
        }

        @Override
        public void write(int b) throws IOException {
            if (filter.keeps(b & 0xff)) {
                out.write(b);
            }
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            byte[] kept = new byte[length];
            int n = 0;
            for (int i = offset; i < offset + length; i++) {
                if (filter.keeps(bytes[i] & 0xff)) {
                    kept[n++] = bytes[i];
                }
            }
            out.write(kept, 0, n);
        }
    }

    /** The state between characters: a sequence may be split across writes. */
    private static final class Filter {
        private static final int TEXT = 0;
        private static final int AFTER_ESC = 1;
        private static final int CSI = 2;
        private int state = TEXT;

        boolean keeps(int c) {
            switch (state) {
                case AFTER_ESC -> {
                    state = c == '[' ? CSI : c == ESC ? AFTER_ESC : TEXT;
                    return false;
                }
                case CSI -> {
                    if (c == ESC) {
                        state = AFTER_ESC;
                        return false;
                    }
                    if (c < 0x20) {
                        // A broken sequence: it ends here, and the line break (say) is still text.
                        state = TEXT;
                        return true;
                    }
                    // Parameter and intermediate bytes 0x20-0x3F; a final byte 0x40-0x7E ends the sequence.
                    if (c >= 0x40 && c <= 0x7e) {
                        state = TEXT;
                    }
                    return false;
                }
                default -> {
                    if (c == ESC) {
                        state = AFTER_ESC;
                        return false;
                    }
                    return true;
                }
            }
        }
    }
}
