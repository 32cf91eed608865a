package io.mstar.wire;

import io.mstar.wire.WireFormatException.Reason;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonFactory;

import java.io.ByteArrayOutputStream;

/**
 * The JSON codec of control messages: {@code {"message_type": "<value>", "body": {...}}}.
 *
 * <p>Format (pinned by the golden files under {@code src/test/resources/golden}):
 * <ul>
 *   <li>field names are the spec's snake_case names; enums travel as their values,
 *       {@link MessageSource} as its integer code;</li>
 *   <li>sets are sorted arrays; maps keyed by integers are arrays of {@code [key, value]} pairs
 *       sorted by key; {@code graph_timings} is an array of timing objects, each naming its node
 *       and walk; string-keyed maps are JSON objects (written with sorted keys);</li>
 *   <li>a nullable field that is null is OMITTED on encode; on decode, an explicit null is read
 *       exactly like an absent field (a required field is then {@code MISSING_FIELD}, an optional
 *       one takes its spec default);</li>
 *   <li>integers are JSON integers (tensor uuids use the full 64 bits); doubles must be finite:
 *       {@code encode} rejects NaN and infinities with {@link IllegalArgumentException};</li>
 *   <li>decode is strict about types (no coercion: {@code "1"} is not an int, {@code 1.5} is not
 *       an int, {@code 1} is not a string or a boolean) and lenient about unknown fields, which
 *       are skipped for forward compatibility; duplicate keys in an object are malformed.</li>
 * </ul>
 *
 * <p>Limits, checked before any value is built: {@link #MAX_DOCUMENT_BYTES} per document,
 * {@link #MAX_NESTING_DEPTH} nested arrays/objects (the envelope counts as one) and
 * {@link #MAX_STRING_LENGTH} characters per string; beyond them decoding fails with
 * {@code TOO_LARGE} or {@code TOO_DEEP}.
 *
 * <p>Decoding streams tokens straight into the records (no intermediate tree). The decoders
 * throw nothing but {@link WireFormatException}. Immutable and thread-safe: share one instance.
 */
public final class WireCodec {

    /** Largest document decoded: 8 MiB. */
    public static final int MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;
    /** Deepest nesting of arrays and objects decoded, the envelope object included. */
    public static final int MAX_NESTING_DEPTH = 32;
    /** Longest string value decoded, in characters: 1 Mi. */
    public static final int MAX_STRING_LENGTH = 1024 * 1024;

    private static final String ROOT = "$";
    private static final String BODY = "$.body";

    private final JsonFactory factory;

    public WireCodec() {
        this.factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxDocumentLength(MAX_DOCUMENT_BYTES)
                        .maxNestingDepth(MAX_NESTING_DEPTH)
                        .maxStringLength(MAX_STRING_LENGTH)
                        .maxNameLength(MAX_STRING_LENGTH)
                        .build())
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
    }

    // ---- encode -----------------------------------------------------------------------------

    /**
     * Encodes a message to a worker as UTF-8 JSON.
     *
     * @throws IllegalArgumentException when a double in the message is not finite
     */
    public byte[] encode(WorkerMessage m) {
        return encode(m.messageType().value(), m.body());
    }

    /**
     * Encodes a message to the conductor as UTF-8 JSON.
     *
     * @throws IllegalArgumentException when a double in the message is not finite
     */
    public byte[] encode(ConductorMessage m) {
        return encode(m.messageType().value(), m.body());
    }

    private byte[] encode(String type, MessageBody body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(512);
        try (JsonGenerator g = factory.createGenerator(ObjectWriteContext.empty(), out)) {
            g.writeStartObject();
            g.writeStringProperty("message_type", type);
            g.writeName("body");
            new WireEncoder(g).body(body);
            g.writeEndObject();
        }
        return out.toByteArray();
    }

    // ---- decode -----------------------------------------------------------------------------

    /**
     * Decodes a message to a worker.
     *
     * @throws WireFormatException for anything but one valid document; nothing else is thrown
     */
    public WorkerMessage decodeWorkerMessage(byte[] json) {
        return decode(json, new Envelope<WorkerMessage>() {
            @Override
            boolean knowType(String value) {
                type = WorkerMessageType.fromValue(value);
                return type != null;
            }

            @Override
            WorkerMessage readBody(WireReader r) {
                return new WorkerMessage(type, BodyDecoding.worker(type, r));
            }

            private WorkerMessageType type;
        });
    }

    /**
     * Decodes a message to the conductor.
     *
     * @throws WireFormatException for anything but one valid document; nothing else is thrown
     */
    public ConductorMessage decodeConductorMessage(byte[] json) {
        return decode(json, new Envelope<ConductorMessage>() {
            @Override
            boolean knowType(String value) {
                type = ConductorMessageType.fromValue(value);
                return type != null;
            }

            @Override
            ConductorMessage readBody(WireReader r) {
                return new ConductorMessage(type, BodyDecoding.conductor(type, r));
            }

            private ConductorMessageType type;
        });
    }

    /** What differs between the two message families: the type lookup and the body decoders. */
    private abstract static class Envelope<M> {
        abstract boolean knowType(String value);

        /** Reads the body object the parser sits on and wraps it in the message. */
        abstract M readBody(WireReader r);
    }

    private <M> M decode(byte[] json, Envelope<M> envelope) {
        if (json == null || json.length == 0) {
            throw new WireFormatException(Reason.MALFORMED_JSON, ROOT, "empty input");
        }
        if (json.length > MAX_DOCUMENT_BYTES) {
            throw new WireFormatException(Reason.TOO_LARGE, ROOT,
                    json.length + " bytes exceeds the limit of " + MAX_DOCUMENT_BYTES);
        }
        WireReader r = null;
        try (JsonParser p = factory.createParser(ObjectReadContext.empty(), json)) {
            r = new WireReader(p, ROOT);
            M message = readEnvelope(json, p, r, envelope);
            r = null; // the document is complete: any failure from here on is trailing data
            try {
                if (p.nextToken() != null) {
                    throw new WireFormatException(Reason.TRAILING_DATA, ROOT, "data after the document");
                }
            } catch (JacksonException e) {
                throw new WireFormatException(Reason.TRAILING_DATA, ROOT, "data after the document", e);
            }
            return message;
        } catch (WireFormatException e) {
            throw e;
        } catch (RuntimeException | StackOverflowError e) {
            throw translate(e, r);
        }
    }

    private <M> M readEnvelope(byte[] json, JsonParser p, WireReader r, Envelope<M> envelope) {
        JsonToken first = p.nextToken();
        if (first == null) {
            throw new WireFormatException(Reason.MALFORMED_JSON, ROOT, "no JSON value");
        }
        if (first != JsonToken.START_OBJECT) {
            throw r.error(Reason.WRONG_TYPE, "the document must be a JSON object");
        }
        boolean typed = false;
        M message = null;
        int bodyStart = -1;
        int bodyEnd = -1;
        String f;
        while ((f = r.nextField()) != null) {
            if (f.equals("message_type")) {
                String value = r.string();
                if (value == null) {
                    throw new WireFormatException(Reason.MISSING_FIELD, r.path(), "message_type is null");
                }
                if (!envelope.knowType(value)) {
                    throw r.error(Reason.UNKNOWN_MESSAGE_TYPE, "unknown message type '" + value + "'");
                }
                typed = true;
                if (bodyStart >= 0) {
                    message = readDeferredBody(json, bodyStart, bodyEnd, envelope);
                }
            } else if (f.equals("body")) {
                if (!r.startObject()) {
                    throw new WireFormatException(Reason.MISSING_FIELD, r.path(), "body is null");
                }
                if (typed) {
                    message = envelope.readBody(r);
                } else {
                    // The body came before its type: remember where it is and decode it once the
                    // type is known. Offsets are exact for a byte[] source.
                    bodyStart = (int) p.currentTokenLocation().getByteOffset();
                    p.skipChildren();
                    bodyEnd = (int) p.currentTokenLocation().getByteOffset() + 1;
                }
            } else {
                r.skip();
            }
        }
        if (!typed) {
            throw new WireFormatException(Reason.MISSING_FIELD, r.fieldPath("message_type"), "required field is absent");
        }
        if (message == null) {
            throw new WireFormatException(Reason.MISSING_FIELD, r.fieldPath("body"), "required field is absent");
        }
        return message;
    }

    private <M> M readDeferredBody(byte[] json, int start, int end, Envelope<M> envelope) {
        WireReader body = null;
        try (JsonParser p = factory.createParser(ObjectReadContext.empty(), json, start, end - start)) {
            body = new WireReader(p, BODY);
            p.nextToken();
            M message = envelope.readBody(body);
            return message;
        } catch (WireFormatException e) {
            throw e;
        } catch (RuntimeException e) {
            throw translate(e, body);
        }
    }

    /** Maps anything a decode threw to the one exception decoders may throw. */
    private static WireFormatException translate(Throwable e, WireReader r) {
        String path = ROOT;
        int depth = 0;
        if (r != null) {
            try {
                path = r.path();
                TokenStreamContext ctx = r.p.streamReadContext();
                depth = ctx == null ? 0 : ctx.getNestingDepth();
            } catch (RuntimeException ignored) {
                // best effort: the path is a diagnostic, the reason is what callers act on
            }
        }
        if (e instanceof StackOverflowError) {
            return new WireFormatException(Reason.TOO_DEEP, path, "nesting too deep", e);
        }
        if (e instanceof StreamConstraintsException) {
            // Jackson reports every limit with this one type; the nesting limit is the one hit
            // while the parser stands at the maximum depth.
            Reason reason = depth >= MAX_NESTING_DEPTH ? Reason.TOO_DEEP : Reason.TOO_LARGE;
            return new WireFormatException(reason, path, e.getMessage(), e);
        }
        if (e instanceof JacksonException) {
            return new WireFormatException(Reason.MALFORMED_JSON, path, e.getMessage(), e);
        }
        return new WireFormatException(Reason.INVALID_VALUE, path, String.valueOf(e.getMessage()), e);
    }
}
