package io.mstar.tensor.arena;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ArenaFileNameTests {

    @Test
    void segmentsAndSpillFilesAreToldApartByTheParseAndByTheCheapCheckAlike() {
        String segment = ArenaFileName.segment("worker-1", 4242, "a1b2", 3);
        String spill = ArenaFileName.spill("worker-1", 4242, "a1b2", 0x5eedL);

        assertThat(ArenaFileName.parse(segment)).hasValueSatisfying(name -> assertThat(name.isSegment()).isTrue());
        assertThat(ArenaFileName.parse(spill)).hasValueSatisfying(name -> assertThat(name.isSegment()).isFalse());
        assertThat(ArenaFileName.namesSegment(segment)).isTrue();
        assertThat(ArenaFileName.namesSegment(spill)).isFalse();
        assertThat(ArenaReader.isSegment(segment)).isTrue();
        assertThat(ArenaReader.isSegment(spill)).isFalse();
        assertThat(ArenaReader.isSegment(null)).isFalse();
    }
}
