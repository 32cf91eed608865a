package io.mstar.tensor;

import java.security.SecureRandom;
import java.util.HashSet;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Mints tensor uuids that are globally unique without coordination (docs/architecture.md#entities-and-ids).
 *
 * <h2>Layout of one uuid (a {@code long})</h2>
 * <pre>
 *  bit 63      62 ........ 52   51 ............ 28   27 ............ 0
 *  [ 0 ]   [ ordinal: 11 ]   [ incarnation: 24 ]   [ counter: 28 ]
 * </pre>
 * <ul>
 *   <li><b>sign bit</b> always 0: uuids are non-negative, so they survive any consumer that reads them as
 *       unsigned or uses a negative sentinel.</li>
 *   <li><b>ordinal</b>: the entity. {@code worker-<n>} is {@code n} (0..{@value #MAX_WORKER_ORDINAL});
 *       the conductor is the reserved {@value #CONDUCTOR_ORDINAL}. Distinct entities can never collide.</li>
 *   <li><b>incarnation</b>: drawn at random (never 0) when the minter starts and again whenever the counter
 *       wraps; a minter never draws the same incarnation twice.</li>
 *   <li><b>counter</b>: 0..2<sup>28</sup>−1 within one incarnation (268 million tensors; at a million
 *       tensors a second, about four and a half minutes).</li>
 * </ul>
 *
 * <h2>Why a uuid is never reused while live</h2>
 * Within one process: a (incarnation, counter) pair is minted once, because the counter only increments and
 * a wrap moves to an incarnation this minter has not used. Between processes of different entities: the
 * ordinal differs. Between a dead worker and its restart (same ordinal): the restart draws its incarnation
 * uniformly from 2<sup>24</sup>−1 values, so it can collide with a still-live uuid only if it hits one of the
 * L incarnations of the dead process whose uuids are still live — probability at most
 * L / (2<sup>24</sup>−1), about 6·10<sup>−8</sup> per restart for the usual L = 1, and L stays small because
 * the conductor tears a lost worker's requests down. The uuid never being 0 (incarnation ≥ 1) keeps 0 free
 * as a "no tensor" value.
 *
 * <p>Thread-safe: {@link #next()} takes this minter's lock (an increment, and a draw once per 2<sup>28</sup>).
 */
public final class TensorUuids {

    public static final int ORDINAL_BITS = 11;
    public static final int INCARNATION_BITS = 24;
    public static final int COUNTER_BITS = 28;

    /** The reserved ordinal of the conductor, the largest one. */
    public static final int CONDUCTOR_ORDINAL = (1 << ORDINAL_BITS) - 1;
    /** The largest worker ordinal. */
    public static final int MAX_WORKER_ORDINAL = CONDUCTOR_ORDINAL - 1;

    static final int INCARNATION_SHIFT = COUNTER_BITS;
    static final int ORDINAL_SHIFT = COUNTER_BITS + INCARNATION_BITS;
    static final long COUNTER_MASK = (1L << COUNTER_BITS) - 1;
    static final long INCARNATION_MASK = (1L << INCARNATION_BITS) - 1;
    static final long ORDINAL_MASK = (1L << ORDINAL_BITS) - 1;

    private static final String WORKER_PREFIX = "worker-";
    private static final String CONDUCTOR = "conductor";

    private final int ordinal;
    private final RandomGenerator random;
    private final Set<Integer> usedIncarnations = new HashSet<>();
    private final long ordinalBits;
    private long incarnationBits;
    private long counter;

    /**
     * A minter for one entity drawing incarnations from {@code random}; tests pass a seeded generator, a
     * process passes nothing (see {@link #forEntity}).
     */
    public TensorUuids(int ordinal, RandomGenerator random) {
        if (ordinal < 0 || ordinal > CONDUCTOR_ORDINAL) {
            throw new IllegalArgumentException("ordinal must be 0.." + CONDUCTOR_ORDINAL + ": " + ordinal);
        }
        this.ordinal = ordinal;
        this.random = random;
        this.ordinalBits = (long) ordinal << ORDINAL_SHIFT;
        drawIncarnation();
    }

    /** The minter of this process for {@code conductor} or {@code worker-<n>}, seeded from SecureRandom. */
    public static TensorUuids forEntity(String entityId) {
        return new TensorUuids(ordinalOf(entityId), new SecureRandom());
    }

    /**
     * The ordinal of an entity id as docs/architecture.md#entities-and-ids names them.
     *
     * @throws IllegalArgumentException for anything but {@code conductor} or {@code worker-<n>} in range
     */
    public static int ordinalOf(String entityId) {
        if (CONDUCTOR.equals(entityId)) {
            return CONDUCTOR_ORDINAL;
        }
        if (entityId != null && entityId.startsWith(WORKER_PREFIX)) {
            String digits = entityId.substring(WORKER_PREFIX.length());
            if (!digits.isEmpty() && digits.length() <= 4 && digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                int n = Integer.parseInt(digits);
                if (n <= MAX_WORKER_ORDINAL) {
                    return n;
                }
            }
        }
        throw new IllegalArgumentException("not an entity id with a uuid ordinal (conductor, worker-0.."
                + MAX_WORKER_ORDINAL + "): " + entityId);
    }

    /** The next uuid; never 0, never negative, never one this minter returned before. */
    public synchronized long next() {
        if (counter > COUNTER_MASK) {
            drawIncarnation();
        }
        return ordinalBits | incarnationBits | counter++;
    }

    public int ordinal() {
        return ordinal;
    }

    /** The incarnation uuids are currently minted under. */
    public synchronized int incarnation() {
        return (int) (incarnationBits >>> INCARNATION_SHIFT);
    }

    /** The entity ordinal a uuid was minted by: which entity holds that tensor. */
    public static int ordinalOfUuid(long uuid) {
        return (int) ((uuid >>> ORDINAL_SHIFT) & ORDINAL_MASK);
    }

    public static int incarnationOfUuid(long uuid) {
        return (int) ((uuid >>> INCARNATION_SHIFT) & INCARNATION_MASK);
    }

    public static long counterOfUuid(long uuid) {
        return uuid & COUNTER_MASK;
    }

    /** Whether the conductor minted this uuid. */
    public static boolean isConductorUuid(long uuid) {
        return ordinalOfUuid(uuid) == CONDUCTOR_ORDINAL;
    }

    /** For the wrap test: jump the counter to {@code value} within the current incarnation. */
    synchronized void advanceCounterTo(long value) {
        if (value < counter || value > COUNTER_MASK + 1) {
            throw new IllegalArgumentException("counter can only move forward, up to 2^" + COUNTER_BITS);
        }
        counter = value;
    }

    private void drawIncarnation() {
        if (usedIncarnations.size() >= INCARNATION_MASK / 2) {
            // 2^23 incarnations × 2^28 uuids each: unreachable in practice, but never loop forever or reuse.
            throw new IllegalStateException("tensor uuid space of ordinal " + ordinal + " exhausted");
        }
        int incarnation;
        do {
            incarnation = 1 + random.nextInt((int) INCARNATION_MASK);
        } while (!usedIncarnations.add(incarnation));
        incarnationBits = (long) incarnation << INCARNATION_SHIFT;
        counter = 0;
    }
}
