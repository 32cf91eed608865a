package io.mstar.messaging;

import io.mstar.wire.ConductorHeartbeat;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.FailRequests;
import io.mstar.wire.RequestScoped;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.SetupDone;
import io.mstar.wire.CollectiveBootstrap;
import io.mstar.wire.TPNoSpeculation;
import io.mstar.wire.WorkerMessage;

/**
 * The record key rule (docs/architecture.md#topics-keys-and-headers). Kafka orders records per partition and partitions
 * by key, so the key is what the protocol needs ordered: one request's messages (the request id); a TP group's batches
 * for one node (the node name, so {@code ScheduleTPNode} and {@code TPNoSpeculation} for it stay in {@code spec_seq}
 * order); a tensor-parallel group's communicator hand-overs (the collective's name); a worker's own announcements
 * (its id); the conductor's heartbeat ("conductor").
 */
public final class RecordKeys {

    private RecordKeys() {
    }

    /** Key of a message to a worker topic. */
    public static String of(WorkerMessage message) {
        Object body = message.body();
        if (body instanceof ScheduleTPNode schedule) {
            return schedule.nodeName();
        }
        if (body instanceof TPNoSpeculation noSpeculation) {
            return noSpeculation.nodeName();
        }
        if (body instanceof CollectiveBootstrap bootstrap) {
            return bootstrap.collective();
        }
        if (body instanceof ConductorHeartbeat) {
            return EntityId.CONDUCTOR.value();
        }
        if (body instanceof RequestScoped scoped) {
            return scoped.requestId();
        }
        throw new IllegalArgumentException("no key rule for worker message " + message.messageType());
    }

    /** Key of a message to the conductor topic sent by {@code sender}. */
    public static String of(ConductorMessage message, EntityId sender) {
        Object body = message.body();
        if (body instanceof SetupDone setupDone) {
            return setupDone.workerId();
        }
        if (body instanceof FailRequests) {
            // Not per request: one FailRequests may name many requests; ordering per worker is what matters.
            return sender.value();
        }
        if (body instanceof RequestScoped scoped) {
            return scoped.requestId();
        }
        throw new IllegalArgumentException("no key rule for conductor message " + message.messageType());
    }
}
