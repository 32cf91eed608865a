package io.mstar.wire;

/**
 * Who asked for a drain or removal. Travels as its integer {@link #code()}.
 */
public enum MessageSource {
    /** The conductor, the owner of the request's lifecycle. */
    CONDUCTOR(0),
    /** Rank 0 of a tensor-parallel group, replaying a decision to its followers. */
    TP_RANK_0(1),
    /** The receiving worker itself (a message it queued for its own loop). */
    SELF(2);

    private final int code;

    MessageSource(int code) {
        this.code = code;
    }

    /** The wire value. */
    public int code() {
        return code;
    }

    /** The source with wire value {@code code}, or null when there is none. */
    public static MessageSource fromCode(int code) {
        for (MessageSource s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return null;
    }
}
