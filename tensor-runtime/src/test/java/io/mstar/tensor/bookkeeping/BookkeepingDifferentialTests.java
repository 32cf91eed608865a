package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;
import io.mstar.testing.Seeds;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Drives the plain and fast backends and an independent shadow model ({@link BookkeepingModel}) with the same
 * random operation sequences and demands the same outcome from all three for every call: the return value, or
 * the exception's reason and uuid. Invariants are checked as it goes: nothing persisted is ever collectable, every
 * tensor is freed exactly once (a free being what a store does with a uuid reported collectable, or forgotten at
 * teardown), and draining at the end leaves nothing live.
 */
class BookkeepingDifferentialTests {

    private static final int OPS_PER_SEED = 100_000;
    private static final long[] FIXED_SEEDS = {1L, 42L, 0x5eedL, -7L, 20261130L};

    @TestFactory
    Stream<DynamicTest> backendsAgreeWithEachOtherAndTheModel() {
        List<Long> seeds = Seeds.withFixed("BookkeepingDifferentialTests", FIXED_SEEDS);
        return seeds.stream().map(seed -> DynamicTest.dynamicTest("seed " + seed, () -> {
            try {
                new Run(seed).run(OPS_PER_SEED);
            } catch (AssertionError e) {
                throw new AssertionError("replay with -Dmstar.test.seed=" + seed + ": " + e.getMessage(), e);
            }
        }));
    }

    /** What a call did: its value, or the reason and uuid it was refused with. */
    private record Outcome(Object value, TensorStoreException.Reason reason, long uuid) {
        static Outcome of(Supplier<Object> call) {
            try {
                return new Outcome(call.get(), null, 0);
            } catch (TensorStoreException e) {
                return new Outcome(null, e.reason(), e.uuid());
            }
        }
    }

    private static final class Run {
        final long seed;
        final Random r;
        final RandomDescriptors gen;
        final BookkeepingModel model = new BookkeepingModel();
        final TensorBookkeeping plain = new PlainTensorBookkeeping();
        // Small start so the index and the entry columns resize many times during the run.
        final FastTensorBookkeeping fast = new FastTensorBookkeeping(4);
        final Map<TensorStoreException.Reason, Long> modelErrors = new EnumMap<>(TensorStoreException.Reason.class);
        /** Minted uuids, live or not; ops pick from the recent end, so they often name freed tensors. */
        final List<Long> minted = new ArrayList<>();
        final Map<Long, Integer> frees = new HashMap<>();
        /** Successful puts per uuid: a test-picked uuid may be stored again after its free, a new incarnation. */
        final Map<Long, Integer> puts = new HashMap<>();
        long counter;
        long[] liveSnapshot = new long[0];
        int snapshotStep = -1000;
        int peakLive;
        int step;
        String op;

        Run(long seed) {
            this.seed = seed;
            this.r = new Random(seed);
            this.gen = new RandomDescriptors(r);
        }

        long mint() {
            // Packed like real uuids (ordinal | incarnation | counter), sometimes negative.
            long u = ((long) r.nextInt(8) << 56) ^ (seed << 24) ^ ++counter;
            minted.add(u);
            return u;
        }

        long pickUuid() {
            return pickUuid(10);
        }

        /** Mostly a live uuid; {@code badPercent} of the time a freed, never-minted or random one. */
        long pickUuid(int badPercent) {
            int k = r.nextInt(100);
            if (k < badPercent / 3) {
                return r.nextLong();
            }
            if (k < badPercent && !minted.isEmpty()) {
                return minted.get(r.nextInt(minted.size()));
            }
            if (step >= snapshotStep + 50) {
                liveSnapshot = model.live.keySet().stream().mapToLong(Long::longValue).toArray();
                snapshotStep = step;
            }
            for (int tries = 0; tries < 8 && liveSnapshot.length > 0; tries++) {
                long u = liveSnapshot[r.nextInt(liveSnapshot.length)];
                if (model.live.containsKey(u)) {
                    return u;
                }
            }
            return minted.isEmpty() ? r.nextLong() : minted.get(minted.size() - 1 - r.nextInt(Math.min(minted.size(), 100)));
        }

        long[] pickUuids(int n, boolean allowRepeats) {
            long[] out = new long[n];
            for (int i = 0; i < n; i++) {
                out[i] = allowRepeats && i > 0 && r.nextInt(400) == 0 ? out[r.nextInt(i)] : pickUuid(1);
            }
            return out;
        }

        int count() {
            return r.nextInt(10) == 0 ? -1 - r.nextInt(2) : r.nextInt(4);
        }

        int[] counts(int n) {
            int[] c = new int[n];
            for (int i = 0; i < n; i++) {
                c[i] = count();
            }
            return c;
        }

        /** Runs one call on all three and demands the same outcome; returns it. */
        Outcome same(String name, Supplier<Object> onModel, Function<TensorBookkeeping, Object> onBackend) {
            op = name;
            Outcome m = Outcome.of(onModel);
            Outcome p = Outcome.of(() -> onBackend.apply(plain));
            Outcome f = Outcome.of(() -> onBackend.apply(fast));
            if (!m.equals(p) || !m.equals(f)) {
                fail("step " + step + " " + name + ": model " + m + ", plain " + p + ", fast " + f);
            }
            if (m.reason != null) {
                modelErrors.merge(m.reason, 1L, Long::sum);
            }
            return m;
        }

        void freed(long uuid) {
            int n = frees.merge(uuid, 1, Integer::sum);
            if (n > puts.getOrDefault(uuid, 0)) {
                fail("step " + step + " " + op + ": uuid " + uuid + " freed " + n + " times, stored "
                        + puts.getOrDefault(uuid, 0));
            }
        }

        void freedAll(Outcome o, boolean cleanup) {
            if (cleanup && o.value instanceof Collectable c) {
                for (long u : c.uuids()) {
                    freed(u);
                }
            }
        }

        void checkInvariants(long... touched) {
            for (long u : touched) {
                BookkeepingModel.Rec rec = model.live.get(u);
                for (TensorBookkeeping b : List.of(plain, fast)) {
                    assertThat(b.contains(u)).as("step %d %s contains %d", step, op, u).isEqualTo(rec != null);
                    if (rec != null) {
                        ReferenceInfo ri = b.referenceInfo(u);
                        assertThat(ri).as("step %d %s reference info of %d", step, op, u)
                                .isEqualTo(new ReferenceInfo(rec.ref, rec.persist, rec.memRegistered));
                        boolean gc = b.canGc(u);
                        if (gc && ri.persist()) {
                            fail("step " + step + " " + op + ": " + u + " collectable while persisted");
                        }
                    }
                }
            }
        }

        void fullCheck() {
            assertThat(plain.liveCount()).as("step %d plain live", step).isEqualTo(model.live.size());
            assertThat(fast.liveCount()).as("step %d fast live", step).isEqualTo(model.live.size());
            for (Map.Entry<Long, BookkeepingModel.Rec> e : model.live.entrySet()) {
                assertThat(fast.getInfo(e.getKey())).as("step %d fast info", step).isEqualTo(e.getValue().info);
                assertThat(plain.getInfo(e.getKey())).as("step %d plain info", step).isEqualTo(e.getValue().info);
                checkInvariants(e.getKey());
            }
            assertThat(plain.errors().snapshot()).as("plain error counts").isEqualTo(expectedErrors());
            assertThat(fast.errors().snapshot()).as("fast error counts").isEqualTo(expectedErrors());
        }

        Map<TensorStoreException.Reason, Long> expectedErrors() {
            Map<TensorStoreException.Reason, Long> out = new EnumMap<>(TensorStoreException.Reason.class);
            for (TensorStoreException.Reason reason : TensorStoreException.Reason.values()) {
                out.put(reason, modelErrors.getOrDefault(reason, 0L));
            }
            return out;
        }

        void run(int ops) {
            for (step = 0; step < ops; step++) {
                oneStep();
                peakLive = Math.max(peakLive, model.live.size());
                if (step % 10_000 == 0) {
                    fullCheck();
                }
            }
            fullCheck();
            drain();
        }

        void oneStep() {
            int k = r.nextInt(100);
            if (k < 18 && model.live.size() > 3000) {
                teardownSome();
            } else if (k < 8) {
                long u = r.nextInt(20) == 0 ? pickUuid() : mint();
                TensorPointerInfo info = gen.info(r.nextInt(50) == 0 ? u + 1 : u);
                Outcome o = same("put_tensor", () -> { model.put(u, info); return null; }, b -> { b.putTensor(u, info); return null; });
                if (o.reason == null) {
                    puts.merge(u, 1, Integer::sum);
                }
                checkInvariants(u);
            } else if (k < 13) {
                int n = 1 + r.nextInt(12);
                long[] us = new long[n];
                List<TensorPointerInfo> infos = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    us[i] = r.nextInt(150) == 0 ? pickUuid() : (r.nextInt(200) == 0 && i > 0 ? us[i - 1] : mint());
                    infos.add(gen.info(us[i]));
                }
                Outcome o = same("put_tensor_batch", () -> { model.putBatch(us, infos); return null; },
                        b -> { b.putTensorBatch(us, infos); return null; });
                if (o.reason == null) {
                    for (long u : us) {
                        puts.merge(u, 1, Integer::sum);
                    }
                }
                checkInvariants(us);
            } else if (k < 18) {
                int n = 1 + r.nextInt(70);
                long[] us = new long[n];
                for (int i = 0; i < n; i++) {
                    us[i] = r.nextInt(1200) == 0 ? pickUuid() : (r.nextInt(1500) == 0 && i > 0 ? us[i - 1] : mint());
                }
                ColumnarTensorInfo cols = gen.columns(us);
                List<TensorPointerInfo> infos = cols.toPointerInfos();
                // The store's contract: columns where the backend takes them, descriptors otherwise.
                Outcome o = same("put_tensor_batch_columns", () -> { model.putBatch(us, infos); return null; }, b -> {
                    if (!b.putTensorBatchColumns(cols)) {
                        b.putTensorBatch(us, infos);
                    }
                    return null;
                });
                if (o.reason == null) {
                    for (long u : us) {
                        puts.merge(u, 1, Integer::sum);
                    }
                }
                checkInvariants(us);
            } else if (k < 26) {
                long u = pickUuid();
                int n = count();
                same("increment_ref", () -> { model.add(u, n); return null; }, b -> { b.incrementRef(u, n); return null; });
                checkInvariants(u);
            } else if (k < 34) {
                long u = pickUuid();
                int n = count();
                same("dereference", () -> { model.add(u, -n); return null; }, b -> { b.dereference(u, n); return null; });
                checkInvariants(u);
            } else if (k < 38) {
                long[] us = pickUuids(1 + r.nextInt(10), true);
                int[] c = counts(us.length + (r.nextInt(100) == 0 ? 1 : 0));
                same("increment_ref_batch", () -> {
                    if (c.length != us.length) {
                        throw new TensorStoreException(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID, "", "");
                    }
                    model.incrementBatch(us, c);
                    return null;
                }, b -> { b.incrementRefBatch(us, c); return null; });
                checkInvariants(us);
            } else if (k < 42) {
                long[] us = pickUuids(1 + r.nextInt(64), true);
                int n = count();
                int[] c = new int[us.length];
                Arrays.fill(c, n);
                same("increment_ref_batch_uniform", () -> { model.incrementBatch(us, c); return null; },
                        b -> { b.incrementRefBatchUniform(us, n); return null; });
                checkInvariants(us);
            } else if (k < 52) {
                long[] us = pickUuids(1 + r.nextInt(10), true);
                int[] c = counts(us.length + (r.nextInt(100) == 0 ? 1 : 0));
                boolean cleanup = r.nextBoolean();
                Outcome o = same("dereference_batch", () -> {
                    if (c.length != us.length) {
                        throw new TensorStoreException(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID, "", "");
                    }
                    return model.dereferenceBatch(us, c, cleanup);
                }, b -> b.dereferenceBatch(us, c, cleanup));
                freedAll(o, cleanup);
                checkInvariants(us);
            } else if (k < 62) {
                long[] us = pickUuids(1 + r.nextInt(64), true);
                int n = count();
                int[] c = new int[us.length];
                Arrays.fill(c, n);
                boolean cleanup = r.nextInt(4) != 0;
                Outcome o = same("dereference_batch_uniform", () -> model.dereferenceBatch(us, c, cleanup),
                        b -> b.dereferenceBatchUniform(us, n, cleanup));
                freedAll(o, cleanup);
                checkInvariants(us);
            } else if (k < 68) {
                long u = pickUuid();
                boolean p = r.nextInt(3) != 0;
                same("set_persist", () -> { model.setPersist(u, p); return null; }, b -> { b.setPersist(u, p); return null; });
                checkInvariants(u);
            } else if (k < 71) {
                long u = pickUuid();
                boolean m = r.nextBoolean();
                same("set_mem_registered", () -> { model.setMemRegistered(u, m); return null; }, b -> { b.setMemRegistered(u, m); return null; });
                checkInvariants(u);
            } else if (k < 76) {
                long u = pickUuid();
                same("can_gc", () -> model.canGc(u), b -> b.canGc(u));
                same("is_registered", () -> model.isRegistered(u), b -> b.isRegistered(u));
            } else if (k < 81) {
                long u = pickUuid();
                same("get_info", () -> model.getInfo(u), b -> b.getInfo(u));
            } else if (k < 88) {
                // A store freeing what it was told is collectable; sometimes a teardown forgetting a live one;
                // sometimes a double free, which must be refused.
                long u = pickUuid();
                boolean collectable = model.live.containsKey(u) && BookkeepingModel.collectable(model.live.get(u));
                if (collectable || r.nextInt(3) == 0) {
                    Outcome o = same("forget_tensor", () -> { model.forget(u); return null; }, b -> { b.forgetTensor(u); return null; });
                    if (o.reason == null) {
                        freed(u);
                    }
                    checkInvariants(u);
                }
            } else if (k < 90) {
                int idx = r.nextInt(12);
                String name = "mstar-arena-" + (r.nextInt(8) == 0 ? r.nextInt(100) : idx);
                same("register_shm_segment", () -> { model.registerSegment(idx, name); return null; },
                        b -> { b.registerShmSegment(idx, name); return null; });
            } else if (k < 96) {
                long[] us = pickUuids(1 + r.nextInt(16), true);
                int[] segs = new int[us.length];
                long[] offs = new long[us.length + (r.nextInt(100) == 0 ? 1 : 0)];
                for (int i = 0; i < us.length; i++) {
                    segs[i] = r.nextInt(5) == 0 ? -1 : r.nextInt(14);
                    offs[i] = r.nextInt(1 << 30);
                }
                same("set_shm_placement", () -> {
                    if (offs.length != us.length) {
                        throw new TensorStoreException(TensorStoreException.Reason.INVALID_ARGUMENT, TensorStoreException.NO_UUID, "", "");
                    }
                    model.setShmPlacement(us, segs, offs);
                    return null;
                }, b -> { b.setShmPlacement(us, segs, offs); return null; });
                for (long u : us) {
                    same("get_info", () -> model.getInfo(u), b -> b.getInfo(u));
                }
            } else {
                long u = pickUuid();
                same("reference_info", () -> model.referenceInfo(u), b -> b.referenceInfo(u));
                same("live_count", () -> model.live.size(), TensorBookkeeping::liveCount);
            }
        }

        /** A request teardown: unpersist a few live tensors and release what they hold, freeing them. */
        void teardownSome() {
            long[] us = pickUuids(1 + r.nextInt(64), false);
            us = Arrays.stream(us).distinct().filter(model.live::containsKey).toArray();
            int[] c = new int[us.length];
            for (int i = 0; i < us.length; i++) {
                long u = us[i];
                same("set_persist", () -> { model.setPersist(u, false); return null; }, b -> { b.setPersist(u, false); return null; });
                c[i] = (int) Math.max(0, model.live.get(u).ref);
            }
            long[] batch = us;
            Outcome o = same("dereference_batch", () -> model.dereferenceBatch(batch, c, true), b -> b.dereferenceBatch(batch, c, true));
            assertThat(((Collectable) o.value).size()).as("step %d torn-down tensors are collectable", step).isEqualTo(us.length);
            freedAll(o, true);
            checkInvariants(us);
        }

        /** Teardown: unpersist and release everything; all of it must come back collectable, once. */
        void drain() {
            op = "drain";
            List<Long> rest = new ArrayList<>(model.live.keySet());
            long[] us = rest.stream().mapToLong(Long::longValue).toArray();
            int[] c = new int[us.length];
            for (int i = 0; i < us.length; i++) {
                long u = us[i];
                same("set_persist", () -> { model.setPersist(u, false); return null; }, b -> { b.setPersist(u, false); return null; });
                c[i] = (int) Math.max(0, model.live.get(u).ref);
            }
            Outcome o = same("dereference_batch", () -> model.dereferenceBatch(us, c, true), b -> b.dereferenceBatch(us, c, true));
            assertThat(((Collectable) o.value).size()).as("everything drained comes back collectable").isEqualTo(us.length);
            freedAll(o, true);
            assertThat(plain.liveCount()).isZero();
            assertThat(fast.liveCount()).isZero();
            assertThat(fast.origins().size()).as("origins released with their tensors").isZero();
            assertThat(frees).as("every tensor stored was freed exactly once").isEqualTo(puts);
            assertThat(puts).as("the run stored tensors").hasSizeGreaterThan(1000);
            System.out.println("[differential] seed " + seed + ": " + step + " ops, " + puts.size() + " tensors, errors "
                    + modelErrors + ", peak live " + peakLive + ", index rebuilds " + fast.index().indexRebuilds());
            assertThat(fast.index().indexRebuilds()).as("the index was resized / cleared along the way").isGreaterThan(3);
            assertThat(Objects.requireNonNull(modelErrors.get(TensorStoreException.Reason.UNKNOWN_UUID))).isGreaterThan(100);
            fullCheck();
        }
    }
}
