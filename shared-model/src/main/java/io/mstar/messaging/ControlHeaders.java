package io.mstar.messaging;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

import io.mstar.deployment.ConfigDigest;

/**
 * The headers every control record carries (docs/architecture.md#topics-keys-and-headers) and those added to a
 * dead-lettered record. Values are UTF-8 text so {@code kafka-console-consumer --property print.headers=true} shows
 * them as is.
 */
public final class ControlHeaders {

    /** Entity id of the sender: {@code conductor} or {@code worker-<n>}. */
    public static final String SENDER = "mstar-sender";
    /** The sender's {@link Incarnation}; a new value means the sender restarted. */
    public static final String INCARNATION = "mstar-incarnation";
    /** Send time in nanoseconds since the epoch, decimal; the receive-side latency timer starts here. */
    public static final String SENT_AT = "mstar-sent-at";
    /** The sender's {@link ConfigDigest}; a receiver with another digest dead-letters the record. */
    public static final String CONFIG = "mstar-config";
    /** On a dead-lettered record: the {@link DeadLetterReason#value()}. */
    public static final String DLQ_REASON = "mstar-dlq-reason";
    /** On a dead-lettered record: the entity id of the receiver that refused it. */
    public static final String DLQ_RECEIVER = "mstar-dlq-receiver";

    private ControlHeaders() {
    }

    /** What a receiver learns from a record's headers. */
    public record Stamp(EntityId sender, Incarnation incarnation, long sentAtEpochNanos, ConfigDigest config) {
    }

    /** Replaces any existing control headers with this stamp. */
    public static void write(Headers headers, Stamp stamp) {
        put(headers, SENDER, stamp.sender().value());
        put(headers, INCARNATION, stamp.incarnation().value());
        put(headers, SENT_AT, Long.toString(stamp.sentAtEpochNanos()));
        put(headers, CONFIG, stamp.config().hex());
    }

    /**
     * Reads every control header, failing with {@link DeadLetterReason#MISSING_HEADER} or
     * {@link DeadLetterReason#INVALID_HEADER}; the config header is read first because a foreign
     * deployment is the most useful thing to report.
     */
    public static Stamp read(Headers headers) {
        String config = require(headers, CONFIG);
        String sender = require(headers, SENDER);
        String incarnation = require(headers, INCARNATION);
        String sentAt = require(headers, SENT_AT);
        EntityId senderId;
        try {
            senderId = EntityId.parse(sender);
        } catch (IllegalArgumentException e) {
            throw new ControlRecordRejectedException(DeadLetterReason.INVALID_HEADER, SENDER + " is not an entity id: " + sender, e);
        }
        long sentAtNanos;
        try {
            sentAtNanos = Long.parseLong(sentAt);
        } catch (NumberFormatException e) {
            throw new ControlRecordRejectedException(DeadLetterReason.INVALID_HEADER, SENT_AT + " is not epoch nanos: " + sentAt, e);
        }
        if (incarnation.isBlank() || config.isBlank()) {
            throw new ControlRecordRejectedException(DeadLetterReason.INVALID_HEADER, "blank " + INCARNATION + " or " + CONFIG);
        }
        return new Stamp(senderId, new Incarnation(incarnation), sentAtNanos, new ConfigDigest(config));
    }

    /** The headers added to a record this receiver dead-letters, beside Spring's original-topic/exception headers. */
    public static Headers deadLetter(EntityId receiver, DeadLetterReason reason) {
        Headers headers = new org.apache.kafka.common.header.internals.RecordHeaders();
        put(headers, DLQ_REASON, reason.value());
        put(headers, DLQ_RECEIVER, receiver.value());
        return headers;
    }

    /** The last value of a header as text, or null when absent. */
    public static String text(Headers headers, String name) {
        if (headers == null) {
            return null;
        }
        Header header = headers.lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** Sets a text header, replacing earlier values. */
    public static void put(Headers headers, String name, String value) {
        headers.remove(name);
        headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }

    /** Now, in nanoseconds since the epoch, from {@code clock} (the resolution the clock offers). */
    public static long epochNanos(Clock clock) {
        Instant now = clock.instant();
        return Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000_000L), now.getNano());
    }

    private static String require(Headers headers, String name) {
        String value = text(headers, name);
        if (value == null) {
            throw new ControlRecordRejectedException(DeadLetterReason.MISSING_HEADER, "no " + name + " header");
        }
        return value;
    }
}
