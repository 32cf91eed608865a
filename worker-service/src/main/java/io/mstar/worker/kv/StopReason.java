package io.mstar.worker.kv;

/** Why a request's generation stops after a token, or that it does not. */
public enum StopReason {
    /** Keep generating. */
    NONE,
    /** The token is an end-of-sequence id (and {@code ignore_eos} is off). */
    EOS,
    /** The request has produced its {@code max_tokens}. */
    MAX_TOKENS;

    public boolean stops() {
        return this != NONE;
    }
}
