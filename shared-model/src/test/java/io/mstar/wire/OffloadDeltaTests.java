package io.mstar.wire;

import io.mstar.wire.OffloadDelta.Move;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.HashMap;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffloadDeltaTests {

    private static OffloadDelta of(Object... ridThenOffload) {
        OffloadDelta d = OffloadDelta.newDelta();
        for (int i = 0; i < ridThenOffload.length; i += 2) {
            if ((Boolean) ridThenOffload[i + 1]) {
                d.addOffloaded((String) ridThenOffload[i]);
            } else {
                d.addReloaded((String) ridThenOffload[i]);
            }
        }
        return d;
    }

    @Test
    void aNewDeltaIsEmpty() {
        OffloadDelta d = OffloadDelta.newDelta();
        assertThat(d.isEmpty()).isTrue();
        assertThat(d.size()).isZero();
        assertThat(d.peekLeft()).isEmpty();
        assertThat(d.popLeft()).isEmpty();
        assertThat(d.rids()).isEmpty();
        assertThat(d.isOffload()).isEmpty();
    }

    @Test
    void offloadsAndReloadsAreKeptInTheOrderTheyWereMade() {
        OffloadDelta d = OffloadDelta.newDelta();
        d.addOffloaded("a");
        d.addReloaded("b");
        d.addOffloaded("a");
        assertThat(d.size()).isEqualTo(3);
        assertThat(d.isEmpty()).isFalse();
        assertThat(d.moves()).containsExactly(new Move("a", true), new Move("b", false), new Move("a", true));
        assertThat(d.rids()).containsExactly("a", "b", "a");
        assertThat(d.isOffload()).containsExactly(true, false, true);
    }

    @Test
    void peekLeftLeavesTheOldestMoveInPlace() {
        OffloadDelta d = of("a", true, "b", false);
        assertThat(d.peekLeft()).contains(new Move("a", true));
        assertThat(d.peekLeft()).contains(new Move("a", true));
        assertThat(d.size()).isEqualTo(2);
    }

    @Test
    void popLeftRemovesMovesOldestFirstUntilEmpty() {
        OffloadDelta d = of("a", true, "b", false);
        assertThat(d.popLeft()).contains(new Move("a", true));
        assertThat(d.popLeft()).contains(new Move("b", false));
        assertThat(d.popLeft()).isEqualTo(Optional.empty());
        assertThat(d.isEmpty()).isTrue();
    }

    @Test
    void copyIsAnIndependentQueue() {
        OffloadDelta d = of("a", true, "b", false);
        OffloadDelta follower = d.copy();
        assertThat(follower).isEqualTo(d).isNotSameAs(d);
        follower.popLeft();
        follower.addOffloaded("c");
        assertThat(d.moves()).containsExactly(new Move("a", true), new Move("b", false));
        d.addReloaded("z");
        assertThat(follower.moves()).containsExactly(new Move("b", false), new Move("c", true));
    }

    @Test
    void extendAppendsTheOtherDeltasMovesAndLeavesItUnchanged() {
        OffloadDelta d = of("a", true);
        OffloadDelta other = of("b", false, "c", true);
        d.extend(other);
        assertThat(d.moves()).containsExactly(new Move("a", true), new Move("b", false), new Move("c", true));
        assertThat(other.moves()).containsExactly(new Move("b", false), new Move("c", true));
    }

    @Test
    void extendingADeltaWithItselfDoublesItsMoves() {
        OffloadDelta d = of("a", true, "b", false);
        d.extend(d);
        assertThat(d.rids()).containsExactly("a", "b", "a", "b");
    }

    @Test
    void takeHandsTheMovesOverAndEmptiesTheSameObjectInPlace() {
        Map<String, OffloadDelta> journal = new HashMap<>();
        OffloadDelta d = of("a", true, "b", false);
        journal.put("llm", d);
        OffloadDelta taken = d.take();
        assertThat(taken.moves()).containsExactly(new Move("a", true), new Move("b", false));
        assertThat(journal.get("llm")).isSameAs(d);
        assertThat(journal.get("llm").isEmpty()).isTrue();
        d.addOffloaded("c");
        assertThat(taken.size()).isEqualTo(2);
    }

    @Test
    void equalityAndHashCodeFollowTheMoves() {
        assertThat(of("a", true)).isEqualTo(of("a", true)).hasSameHashCodeAs(of("a", true));
        assertThat(of("a", true)).isNotEqualTo(of("a", false));
        assertThat(of("a", true)).isNotEqualTo(of("b", true));
        assertThat(of("a", true, "b", true)).isNotEqualTo(of("b", true, "a", true));
        assertThat(OffloadDelta.newDelta()).isEqualTo(OffloadDelta.newDelta());
        assertThat(of("a", true)).isNotEqualTo("a");
    }

    @Test
    void fromWireRejectsArraysOfDifferentLengths() {
        assertThat(OffloadDelta.fromWire(List.of("a", "b"), List.of(true, false))).isEqualTo(of("a", true, "b", false));
        assertThatThrownBy(() -> OffloadDelta.fromWire(List.of("a"), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void ofBuildsADeltaFromMoves() {
        assertThat(OffloadDelta.of(List.of(new Move("a", false), new Move("b", true))))
                .isEqualTo(of("a", false, "b", true));
    }

    @Test
    void aNullRequestIdIsRejected() {
        OffloadDelta d = OffloadDelta.newDelta();
        assertThatThrownBy(() -> d.addOffloaded(null)).isInstanceOf(NullPointerException.class);
        assertThat(d.isEmpty()).isTrue();
    }

    @Test
    void snapshotsCannotModifyTheDelta() {
        OffloadDelta d = of("a", true);
        assertThatThrownBy(() -> d.rids().add("x")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> d.moves().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThat(d.size()).isEqualTo(1);
    }
}
