package io.mstar.graph;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class NestedLoopIndicesTests {

    private static final List<String> ORDER = List.of("outer", "middle", "inner");

    private static NestedLoopIndices at(int fwd, int outer, int middle, int inner) {
        return new NestedLoopIndices(ORDER, Map.of("outer", outer, "middle", middle, "inner", inner), fwd);
    }

    @Test
    void anythingIsGreaterThanNothing() {
        assertThat(at(0, 0, 0, 0).labelContextGt(null, null)).isTrue();
        assertThat(at(0, 0, 0, 0).labelContextGt(null, "outer")).isTrue();
    }

    @Test
    void theForwardPassIndexDecidesFirst() {
        assertThat(at(2, 0, 0, 0).labelContextGt(at(1, 9, 9, 9), null)).isTrue();
        assertThat(at(1, 9, 9, 9).labelContextGt(at(2, 0, 0, 0), null)).isFalse();
    }

    @Test
    void loopsAreComparedOuterToInnerAndTheFirstDifferenceWins() {
        assertThat(at(1, 2, 0, 0).labelContextGt(at(1, 1, 9, 9), null)).isTrue();
        assertThat(at(1, 1, 9, 9).labelContextGt(at(1, 2, 0, 0), null)).isFalse();
        assertThat(at(1, 1, 1, 5).labelContextGt(at(1, 1, 1, 4), null)).isTrue();
        assertThat(at(1, 1, 1, 4).labelContextGt(at(1, 1, 1, 5), null)).isFalse();
    }

    @Test
    void equalPositionsAreNotGreater() {
        assertThat(at(1, 2, 3, 4).labelContextGt(at(1, 2, 3, 4), null)).isFalse();
    }

    @Test
    void theComparisonStopsBeforeTheTargetLoop() {
        // differs only in the target loop and inside it: not greater
        assertThat(at(1, 2, 5, 9).labelContextGt(at(1, 2, 3, 0), "middle")).isFalse();
        // differs before the target: decided there
        assertThat(at(1, 3, 0, 0).labelContextGt(at(1, 2, 5, 9), "middle")).isTrue();
        // the outermost loop as target: only the forward-pass index counts
        assertThat(at(1, 9, 9, 9).labelContextGt(at(1, 0, 0, 0), "outer")).isFalse();
        // a target that is not a loop of the order compares every loop
        assertThat(at(1, 0, 0, 1).labelContextGt(at(1, 0, 0, 0), "elsewhere")).isTrue();
    }

    @Test
    void aMissingLoopIndexCountsAsZero() {
        NestedLoopIndices missing = new NestedLoopIndices(ORDER, Map.of("outer", 1), 1);
        assertThat(at(1, 1, 0, 1).labelContextGt(missing, null)).isTrue();
        assertThat(missing.labelContextGt(at(1, 1, 0, 1), null)).isFalse();
        assertThat(missing.labelContextGt(at(1, 1, 0, 0), null)).isFalse();
        assertThat(at(1, 1, 0, 0).labelContextGt(missing, null)).isFalse();
    }

    @Test
    void onlyTheReceiversOrderIsWalked() {
        NestedLoopIndices shortOrder = new NestedLoopIndices(List.of("outer"), Map.of("outer", 1, "inner", 0), 1);
        NestedLoopIndices other = new NestedLoopIndices(ORDER, Map.of("outer", 1, "inner", 7), 1);
        assertThat(shortOrder.labelContextGt(other, null)).isFalse();
        assertThat(other.labelContextGt(shortOrder, null)).isTrue();
    }

    @Test
    void maxOfNothingIsThis() {
        NestedLoopIndices a = at(1, 1, 1, 1);
        assertThat(a.max(null)).isSameAs(a);
    }

    @Test
    void maxPicksTheGreater() {
        NestedLoopIndices small = at(1, 1, 1, 1);
        NestedLoopIndices big = at(1, 1, 2, 0);
        assertThat(small.max(big)).isSameAs(big);
        assertThat(big.max(small)).isSameAs(big);
    }

    @Test
    void maxKeepsThisOnATie() {
        NestedLoopIndices a = at(1, 1, 1, 1);
        NestedLoopIndices b = at(1, 1, 1, 1);
        assertThat(a.max(b)).isSameAs(a);
        assertThat(b.max(a)).isSameAs(b);
    }
}
