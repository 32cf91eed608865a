package io.mstar.conductor.api;

/** Headers the conductor's HTTP routes answer with, whichever route (public, OpenAI-compatible) served the call. */
public final class ApiHeaders {

    /** The id of the request a response belongs to (given by the client or assigned by the conductor). */
    public static final String REQUEST_ID = "Mstar-Request-Id";

    private ApiHeaders() {
    }
}
