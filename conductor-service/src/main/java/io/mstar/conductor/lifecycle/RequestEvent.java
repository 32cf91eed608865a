package io.mstar.conductor.lifecycle;

/** What can happen to a request. */
public enum RequestEvent {
    /** A slot is free: placed on workers, inputs stored, {@code NewRequest} sent. */
    ADMIT,
    /** Every partition done and every output read and delivered. */
    FINISH,
    /** Admin, client cancel or disconnect, or the deadline. */
    ABORT,
    /** A worker failed it, was lost or restarted, an output could not be read, or the policy gave up. */
    FAIL,
    /** Every expected {@code ReadsDone} arrived, or the drain timeout passed. */
    DRAINED
}
