package io.mstar.wire;

/**
 * A body about one request. The messaging layer keys the Kafka record by this id, so every
 * message of a request lands in one partition and keeps its send order.
 */
public interface RequestScoped {
    /** The wire request id. */
    String requestId();
}
