package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tensor lifetime (docs/architecture.md#tensor-lifetime) on the producer side: a persisted output is stored with a +1
 * safety hold, which is replaced by the number of routed copies; every {@code TensorReceived} acks −k (k reads);
 * {@code UnpersistTensors} adds n (the times the conductor handed the descriptor out) and clears persist. Whatever the
 * order those messages arrive in – every permutation of small cases – the tensor becomes collectable exactly when the
 * last of them has arrived, and is freed once.
 */
class UnpersistAndAckOrderTests {

    private static final long UUID = 0x0300_0000_0000_0042L;

    /** An ack of {@code reads} copies, or (reads == -1) the unpersist. */
    private record Event(int reads) {
        boolean unpersist() {
            return reads < 0;
        }

        @Override
        public String toString() {
            return unpersist() ? "unpersist" : "ack(" + reads + ")";
        }
    }

    /** Routed copies, handouts by the conductor, and how the acks group those reads. */
    private record Case(int routed, int handedOut, List<Integer> acks) {
    }

    private static List<Case> cases() {
        List<Case> out = new ArrayList<>();
        out.add(new Case(0, 0, List.of()));
        out.add(new Case(1, 0, List.of(1)));
        out.add(new Case(0, 1, List.of(1)));
        out.add(new Case(1, 1, List.of(1, 1)));
        out.add(new Case(2, 0, List.of(2)));
        out.add(new Case(2, 1, List.of(1, 1, 1)));
        out.add(new Case(1, 2, List.of(2, 1)));
        out.add(new Case(2, 2, List.of(1, 1, 1, 1)));
        out.add(new Case(0, 3, List.of(1, 2)));
        return out;
    }

    private static List<List<Event>> permutations(List<Event> events) {
        if (events.isEmpty()) {
            return List.of(List.of());
        }
        List<List<Event>> out = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            List<Event> rest = new ArrayList<>(events);
            Event first = rest.remove(i);
            for (List<Event> tail : permutations(rest)) {
                List<Event> p = new ArrayList<>();
                p.add(first);
                p.addAll(tail);
                out.add(p);
            }
        }
        return out;
    }

    @TestFactory
    Stream<DynamicTest> tensorIsFreedExactlyWhenUnpersistAndEveryAckHaveArrived() {
        List<DynamicTest> tests = new ArrayList<>();
        for (String backend : List.of("plain", "fast")) {
            Supplier<TensorBookkeeping> make = backend.equals("plain") ? PlainTensorBookkeeping::new : FastTensorBookkeeping::new;
            for (Case c : cases()) {
                List<Event> events = new ArrayList<>();
                c.acks().forEach(k -> events.add(new Event(k)));
                events.add(new Event(-1));
                List<List<Event>> perms = permutations(events);
                tests.add(DynamicTest.dynamicTest(backend + " " + c + " (" + perms.size() + " orders)", () -> {
                    int variant = 0;
                    for (List<Event> order : perms) {
                        // Rotate how acks are delivered so every delivery path meets every order.
                        play(make.get(), c, order, variant++ % 3);
                    }
                }));
            }
        }
        return tests.stream();
    }

    private static void play(TensorBookkeeping b, Case c, List<Event> order, int delivery) {
        String where = c + " order " + order + " delivery " + delivery;
        b.putTensor(UUID, new TensorPointerInfo(UUID, List.of(4L), List.of(1L), "float32", 16, 0x1000, "h:1", "worker-0"));
        b.incrementRef(UUID, 1);
        b.setPersist(UUID, true);
        b.incrementRef(UUID, c.routed());
        b.dereference(UUID, 1);
        assertThat(b.canGc(UUID)).as("persisted after routing: %s", where).isFalse();

        int frees = 0;
        for (int i = 0; i < order.size(); i++) {
            Event e = order.get(i);
            boolean last = i == order.size() - 1;
            if (e.unpersist()) {
                b.incrementRef(UUID, c.handedOut());
                b.setPersist(UUID, false);
                if (b.canGc(UUID)) {
                    b.forgetTensor(UUID);
                    frees++;
                }
            } else {
                switch (delivery) {
                    case 0 -> frees += b.dereferenceBatch(new long[]{UUID}, new int[]{e.reads()}, true).size();
                    case 1 -> frees += b.dereferenceBatchUniform(new long[]{UUID}, e.reads(), true).size();
                    default -> {
                        b.dereference(UUID, e.reads());
                        if (b.canGc(UUID)) {
                            b.forgetTensor(UUID);
                            frees++;
                        }
                    }
                }
            }
            if (!last) {
                assertThat(frees).as("freed before the last message (%s after %s): %s", e, i, where).isZero();
                assertThat(b.contains(UUID)).as("still held after %s: %s", e, where).isTrue();
            }
        }
        assertThat(frees).as("freed exactly once after the last message: %s", where).isEqualTo(1);
        assertThat(b.contains(UUID)).as(where).isFalse();
        assertThat(b.liveCount()).as(where).isZero();
        assertThat(b.errors().total()).as(where).isZero();
    }
}
