package io.mstar.worker.kernel.minilm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Padding to the longest sentence, and further to a captured graph's shape. */
class PaddedBatchTests {

    @Test
    void sentencesArePaddedOnTheRightToTheLongest() {
        PaddedBatch b = PaddedBatch.of(List.of(new int[] {101, 7, 102}, new int[] {101, 102}));
        assertThat(b.batch()).isEqualTo(2);
        assertThat(b.length()).isEqualTo(3);
        assertThat(b.ids()).containsExactly(101, 7, 102, 101, 102, 0);
        assertThat(b.lengths()).containsExactly(3, 2);
    }

    @Test
    void aGraphShapeAddsPadSentencesOfOneTokenAndPadsEveryRow() {
        PaddedBatch b = PaddedBatch.of(List.of(new int[] {101, 7, 102}, new int[] {101, 102}, new int[] {5}), 4, 4);
        assertThat(b.rows()).isEqualTo(16);
        assertThat(b.ids()).containsExactly(101, 7, 102, 0, 101, 102, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0);
        // the extra sentence has one [PAD] token: every row of the padded shape stays finite
        assertThat(b.lengths()).containsExactly(3, 2, 1, 1);
    }

    @Test
    void aShapeTooSmallIsRefused() {
        List<int[]> sentences = List.of(new int[] {1, 2, 3}, new int[] {4});
        assertThatThrownBy(() -> PaddedBatch.of(sentences, 1, 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("do not fit 1 x 4");
        assertThatThrownBy(() -> PaddedBatch.of(sentences, 2, 2)).isInstanceOf(IllegalArgumentException.class);
    }
}
