package io.mstar.wire;

import io.mstar.wire.WireFormatException.Reason;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamContext;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Typed, strict reads over a Jackson token stream, with JSON paths for errors.
 *
 * <p>Convention: a value reader is called with the parser ON the value's first token and leaves
 * it on the value's last token. It returns null for a JSON null; the caller decides whether null
 * means "absent" (a field: required → {@code MISSING_FIELD}, optional → default) or is an error
 * (an array element or map value: {@code WRONG_TYPE}). No coercion between JSON types.
 *
 * <p>One instance per decode call; not thread-safe.
 */
final class WireReader {

    /** Reads one value at the current token; null for JSON null. */
    @FunctionalInterface
    interface ValueReader<T> {
        T read(WireReader r);
    }

    final JsonParser p;
    private final String rootPath;

    WireReader(JsonParser p, String rootPath) {
        this.p = p;
        this.rootPath = rootPath;
    }

    // ---- paths and errors -------------------------------------------------------------------

    /** Path of the value at the current token (for a container start/end: the container). */
    String path() {
        TokenStreamContext ctx = p.streamReadContext();
        JsonToken t = p.currentToken();
        if (ctx != null && (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY)) {
            ctx = ctx.getParent();
        }
        return render(ctx);
    }

    /** Path of field {@code name} of the object the parser has just closed (or is in). */
    String fieldPath(String name) {
        return path() + segment(name);
    }

    private String render(TokenStreamContext ctx) {
        List<String> segments = new ArrayList<>();
        for (TokenStreamContext c = ctx; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) {
                if (c.hasCurrentIndex()) {
                    segments.add("[" + c.getCurrentIndex() + "]");
                }
            } else if (c.currentName() != null) {
                segments.add(segment(c.currentName()));
            }
        }
        StringBuilder sb = new StringBuilder(rootPath);
        for (int i = segments.size() - 1; i >= 0; i--) {
            sb.append(segments.get(i));
        }
        return sb.toString();
    }

    private static String segment(String name) {
        if (!name.isEmpty() && isIdentifier(name)) {
            return "." + name;
        }
        return "['" + name.replace("\\", "\\\\").replace("'", "\\'") + "']";
    }

    private static boolean isIdentifier(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    WireFormatException error(Reason reason, String detail) {
        return new WireFormatException(reason, path(), detail);
    }

    private WireFormatException wrongType(String expected) {
        return error(Reason.WRONG_TYPE, "expected " + expected + ", got " + describe(p.currentToken()));
    }

    private static String describe(JsonToken t) {
        if (t == null) {
            return "end of input";
        }
        switch (t) {
            case START_OBJECT: return "an object";
            case START_ARRAY: return "an array";
            case VALUE_STRING: return "a string";
            case VALUE_NUMBER_INT: return "an integer";
            case VALUE_NUMBER_FLOAT: return "a float";
            case VALUE_TRUE:
            case VALUE_FALSE: return "a boolean";
            case VALUE_NULL: return "null";
            default: return t.toString();
        }
    }

    // ---- objects ----------------------------------------------------------------------------

    /**
     * Checks the current token opens an object; false for JSON null (the caller treats it as
     * absent).
     */
    boolean startObject() {
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_OBJECT) {
            return true;
        }
        if (t == JsonToken.VALUE_NULL) {
            return false;
        }
        throw wrongType("an object");
    }

    /**
     * Advances to the next field of the current object and then onto its value; returns the
     * field name, or null at the object's end (the parser then sits on END_OBJECT).
     */
    String nextField() {
        String name = p.nextName();
        if (name == null) {
            return null; // END_OBJECT: nextName only returns null there in a well-formed stream
        }
        p.nextToken();
        return name;
    }

    /** Skips the value at the current token (an unknown field: forward compatibility). */
    void skip() {
        p.skipChildren();
    }

    /** Throws MISSING_FIELD for a required field that was absent or null. */
    <T> T required(T value, String field) {
        if (value == null) {
            throw new WireFormatException(Reason.MISSING_FIELD, fieldPath(field), "required field is absent or null");
        }
        return value;
    }

    /** Builds a value, turning a constructor's rejection into INVALID_VALUE at the object's path. */
    <T> T build(Supplier<T> constructor) {
        try {
            return constructor.get();
        } catch (RuntimeException e) {
            throw new WireFormatException(Reason.INVALID_VALUE, path(), String.valueOf(e.getMessage()), e);
        }
    }

    // ---- scalars ----------------------------------------------------------------------------

    String string() {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_STRING) {
            return p.getString();
        }
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        throw wrongType("a string");
    }

    Boolean bool() {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_TRUE) {
            return Boolean.TRUE;
        }
        if (t == JsonToken.VALUE_FALSE) {
            return Boolean.FALSE;
        }
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        throw wrongType("a boolean");
    }

    Integer int32() {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NUMBER_INT) {
            if (p.getNumberType() != JsonParser.NumberType.INT) {
                throw error(Reason.INVALID_VALUE, "integer out of 32-bit range");
            }
            return p.getIntValue();
        }
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        throw wrongType("an integer");
    }

    Long int64() {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NUMBER_INT) {
            if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw error(Reason.INVALID_VALUE, "integer out of 64-bit range");
            }
            return p.getLongValue();
        }
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        throw wrongType("an integer");
    }

    /** A finite double; JSON integers are accepted (a JSON number is a number). */
    Double float64() {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NUMBER_FLOAT || t == JsonToken.VALUE_NUMBER_INT) {
            double d = p.getDoubleValue();
            if (!Double.isFinite(d)) {
                throw error(Reason.INVALID_VALUE, "number out of double range");
            }
            return d;
        }
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        throw wrongType("a number");
    }

    // ---- containers -------------------------------------------------------------------------

    /** A JSON array; null elements are WRONG_TYPE. Returns null for JSON null. */
    <T> List<T> list(ValueReader<T> element) {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_ARRAY) {
            throw wrongType("an array");
        }
        List<T> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            out.add(element(element));
        }
        return out;
    }

    // Scalar lists without the ValueReader indirection: list() is called with many different
    // readers, so its call site is megamorphic and each element would pay a virtual call.

    /** A JSON array of strings; null for JSON null. */
    List<String> strings() {
        if (!startArray()) {
            return null;
        }
        List<String> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            out.add(nonNull(string()));
        }
        return out;
    }

    /** A JSON array of 32-bit integers; null for JSON null. */
    List<Integer> int32s() {
        if (!startArray()) {
            return null;
        }
        List<Integer> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            out.add(nonNull(int32()));
        }
        return out;
    }

    /** A JSON array of 64-bit integers; null for JSON null. */
    List<Long> int64s() {
        if (!startArray()) {
            return null;
        }
        List<Long> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            out.add(nonNull(int64()));
        }
        return out;
    }

    /** A JSON array of booleans; null for JSON null. */
    List<Boolean> bools() {
        if (!startArray()) {
            return null;
        }
        List<Boolean> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            out.add(nonNull(bool()));
        }
        return out;
    }

    private boolean startArray() {
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_ARRAY) {
            return true;
        }
        if (t == JsonToken.VALUE_NULL) {
            return false;
        }
        throw wrongType("an array");
    }

    private <T> T nonNull(T v) {
        if (v == null) {
            throw error(Reason.WRONG_TYPE, "null is not allowed here");
        }
        return v;
    }

    private <T> T element(ValueReader<T> reader) {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            throw error(Reason.WRONG_TYPE, "null is not allowed here");
        }
        T v = reader.read(this);
        if (v == null) {
            throw error(Reason.WRONG_TYPE, "null is not allowed here");
        }
        return v;
    }

    /** A JSON object read as a string-keyed map (sorted); null values are WRONG_TYPE. */
    <V> Map<String, V> object(ValueReader<V> value) {
        if (!startObject()) {
            return null;
        }
        TreeMap<String, V> out = new TreeMap<>();
        String name;
        while ((name = nextField()) != null) {
            out.put(name, element(value));
        }
        return out;
    }

    /**
     * A map whose keys are not strings: an array of {@code [key, value]} pairs. A pair must have
     * exactly two entries and keys must be unique (INVALID_VALUE otherwise).
     */
    <K extends Comparable<? super K>, V> Map<K, V> pairs(ValueReader<K> key, ValueReader<V> value) {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_ARRAY) {
            throw wrongType("an array of [key, value] pairs");
        }
        TreeMap<K, V> out = new TreeMap<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            if (p.currentToken() != JsonToken.START_ARRAY) {
                throw wrongType("a [key, value] pair");
            }
            String pairPath = path();
            if (p.nextToken() == JsonToken.END_ARRAY) {
                throw new WireFormatException(Reason.INVALID_VALUE, pairPath, "a pair needs a key and a value");
            }
            K k = element(key);
            if (p.nextToken() == JsonToken.END_ARRAY) {
                throw new WireFormatException(Reason.INVALID_VALUE, pairPath, "a pair needs a key and a value");
            }
            V v = element(value);
            if (p.nextToken() != JsonToken.END_ARRAY) {
                throw new WireFormatException(Reason.INVALID_VALUE, pairPath, "a pair has exactly two entries");
            }
            if (out.put(k, v) != null) {
                throw new WireFormatException(Reason.INVALID_VALUE, pairPath, "duplicate key " + k);
            }
        }
        return out;
    }

    /** Any JSON value, in the {@link JsonValues} form. */
    Object any() {
        JsonToken t = p.currentToken();
        switch (t) {
            case VALUE_NULL:
                return null;
            case VALUE_STRING:
                return p.getString();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NUMBER_INT:
                return int64();
            case VALUE_NUMBER_FLOAT:
                return float64();
            case START_ARRAY: {
                List<Object> out = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    out.add(any());
                }
                return Collections.unmodifiableList(out);
            }
            case START_OBJECT:
                return anyObject();
            default:
                throw wrongType("a JSON value");
        }
    }

    /** A free-form JSON object (nulls allowed as values); null for JSON null. */
    Map<String, Object> anyObject() {
        if (!startObject()) {
            return null;
        }
        TreeMap<String, Object> out = new TreeMap<>();
        String name;
        while ((name = nextField()) != null) {
            out.put(name, any());
        }
        return Collections.unmodifiableSortedMap(out);
    }
}
