package io.mstar.wire;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Free-form JSON values (the spec's untyped {@code dict} fields, e.g.
 * {@code NewRequestConductor.model_kwargs}) in one canonical Java form, so that a value equals
 * itself after a round trip: null, {@link String}, {@link Boolean}, {@link Long} (every JSON
 * integer; Integer, Short and Byte are widened), {@link Double} (finite; Float is widened),
 * an unmodifiable {@link List} or an unmodifiable, key-sorted {@link Map} with String keys.
 * Anything else is rejected with {@link IllegalArgumentException}.
 */
final class JsonValues {

    private JsonValues() {
    }

    static Object normalize(Object value) {
        if (value == null || value instanceof String || value instanceof Boolean || value instanceof Long) {
            return value;
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (!Double.isFinite(d)) {
                throw new IllegalArgumentException("JSON numbers must be finite, got " + d);
            }
            return d;
        }
        if (value instanceof BigInteger) {
            return ((BigInteger) value).longValueExact();
        }
        if (value instanceof List) {
            List<?> list = (List<?>) value;
            List<Object> copy = new ArrayList<>(list.size());
            for (Object o : list) {
                copy.add(normalize(o));
            }
            return Collections.unmodifiableList(copy);
        }
        if (value instanceof Map) {
            return object((Map<?, ?>) value);
        }
        throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
    }

    static Map<String, Object> object(Map<?, ?> map) {
        TreeMap<String, Object> copy = new TreeMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            if (!(e.getKey() instanceof String)) {
                throw new IllegalArgumentException("JSON object keys must be strings, got " + e.getKey());
            }
            copy.put((String) e.getKey(), normalize(e.getValue()));
        }
        return Collections.unmodifiableSortedMap(copy);
    }
}
