package io.mstar.tensor;

import org.agrona.collections.Hashing;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;

/**
 * Maps and sets keyed by uuids or addresses: Agrona's open-addressing tables, which mix every bit of the key.
 * {@link java.util.HashMap} hashes a {@code Long} by folding its halves, so the uuids of one request (minted a
 * batch's stride apart) and aligned device addresses share bins, and the bins turn into trees on the engine loop's
 * hottest paths. Iterators are allocated per call (Agrona's default reuses one), so nested iteration stays safe.
 */
public final class LongKeys {

    private static final int INITIAL_CAPACITY = 16;

    private LongKeys() {
    }

    public static <V> Long2ObjectHashMap<V> map() {
        return new Long2ObjectHashMap<>(INITIAL_CAPACITY, Hashing.DEFAULT_LOAD_FACTOR, false);
    }

    public static LongHashSet set() {
        return new LongHashSet(INITIAL_CAPACITY, Hashing.DEFAULT_LOAD_FACTOR, false);
    }
}
