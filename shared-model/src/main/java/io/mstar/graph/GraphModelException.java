package io.mstar.graph;

/**
 * A graph or worker-graph split that cannot be built. {@link #subject()} names the offending
 * node, edge, walk, loop or model so the model author can find it; the caller's only sensible
 * action is to fix the model definition or the deployment config, so there is no retriable branch.
 */
public final class GraphModelException extends RuntimeException {

    private final String subject;

    public GraphModelException(String subject, String problem) {
        super(subject + ": " + problem);
        this.subject = subject;
    }

    /** The offending node, edge, walk, loop or model, as named in the message. */
    public String subject() {
        return subject;
    }
}
