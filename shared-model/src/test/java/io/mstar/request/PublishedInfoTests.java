package io.mstar.request;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PublishedInfoTests {

    private static PublishedSequence seq(int rank, String label, int len) {
        return new PublishedSequence(rank, label, len, List.of(len));
    }

    @Test
    void mergeReplacesMatchingEntriesInPlaceAndAppendsNewOnes() {
        PublishedInfo mine = new PublishedInfo("kv_cache", 2, List.of(seq(0, "a", 1), seq(1, "a", 1)));
        PublishedInfo theirs = new PublishedInfo("kv_cache", 2, List.of(seq(2, "a", 9), seq(0, "a", 5)));
        PublishedInfo merged = mine.merge(theirs);
        assertThat(merged.sequences()).containsExactly(seq(0, "a", 5), seq(1, "a", 1), seq(2, "a", 9));
        assertThat(mine.sequences()).containsExactly(seq(0, "a", 1), seq(1, "a", 1));
        assertThat(merged.worldSize()).isEqualTo(2);
    }

    @Test
    void mergeOfDifferentResourcesIsRejected() {
        PublishedInfo kv = new PublishedInfo("kv_cache", 1, List.of());
        assertThatThrownBy(() -> kv.merge(new PublishedInfo("ssm_state", 1, List.of())))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void twoEntriesForOneRankAndLabelAreRejected() {
        assertThatThrownBy(() -> new PublishedInfo("kv_cache", 1, List.of(seq(0, "a", 1), seq(0, "a", 2))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new PublishedInfo("kv_cache", 1, List.of(seq(0, "a", 1), seq(0, "b", 2))).sequences()).hasSize(2);
    }
}
