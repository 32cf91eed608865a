package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ByteRangeTests {

    @Test
    void parsesTheThreeSingleRangeForms() {
        assertThat(ByteRange.parse("bytes=0-99", 1000)).isEqualTo(new ByteRange(0, 99));
        assertThat(ByteRange.parse("bytes=900-", 1000)).isEqualTo(new ByteRange(900, 999));
        assertThat(ByteRange.parse("bytes=-100", 1000)).isEqualTo(new ByteRange(900, 999));
        assertThat(ByteRange.parse("bytes=-5000", 1000)).isEqualTo(new ByteRange(0, 999));
        assertThat(ByteRange.parse("bytes=990-5000", 1000)).as("last clamps to the end").isEqualTo(new ByteRange(990, 999));
        assertThat(ByteRange.parse("bytes=5-5", 1000).length()).isEqualTo(1);
    }

    @Test
    void refusesWhatIsNotOneSatisfiableRange() {
        assertThat(ByteRange.parse("bytes=1000-", 1000)).isNull();
        assertThat(ByteRange.parse("bytes=5-4", 1000)).isNull();
        assertThat(ByteRange.parse("bytes=0-1,5-6", 1000)).isNull();
        assertThat(ByteRange.parse("items=0-1", 1000)).isNull();
        assertThat(ByteRange.parse("bytes=a-b", 1000)).isNull();
        assertThat(ByteRange.parse("bytes=-0", 1000)).isNull();
        assertThat(ByteRange.parse("bytes=0-0", 0)).isNull();
    }
}
