package io.mstar.tensor.transport;

/**
 * One satisfiable byte range of a {@code length}-byte tensor, inclusive ends as HTTP writes them.
 * Parses {@code bytes=a-b}, {@code bytes=a-} and {@code bytes=-n}; a multi-range or malformed header
 * is refused like an unsatisfiable one (416), not served in full: our only clients are readers that
 * asked for exactly one range, so a bad header is a bug to surface rather than bytes to waste.
 */
record ByteRange(long first, long last) {

    long length() {
        return last - first + 1;
    }

    /** The range, or null when {@code header} is not one satisfiable range of {@code length} bytes. */
    static ByteRange parse(String header, long length) {
        if (!header.startsWith("bytes=") || header.indexOf(',') >= 0) {
            return null;
        }
        String spec = header.substring("bytes=".length()).trim();
        int dash = spec.indexOf('-');
        if (dash < 0) {
            return null;
        }
        try {
            String a = spec.substring(0, dash).trim();
            String b = spec.substring(dash + 1).trim();
            if (a.isEmpty()) { // suffix: the last n bytes
                long n = Long.parseLong(b);
                return n <= 0 || length == 0 ? null : new ByteRange(Math.max(0, length - n), length - 1);
            }
            long first = Long.parseLong(a);
            long last = b.isEmpty() ? length - 1 : Math.min(Long.parseLong(b), length - 1);
            return first < 0 || first >= length || last < first ? null : new ByteRange(first, last);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
