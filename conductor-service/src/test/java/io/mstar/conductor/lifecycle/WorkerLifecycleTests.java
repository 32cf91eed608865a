package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WorkerLifecycleTests {

    /** Every (state, event) pair: the next state, or ILLEGAL. */
    @ParameterizedTest(name = "{0} + {1} -> {2}")
    @CsvSource(textBlock = """
            STARTING, SETUP_DONE, READY
            STARTING, RESTARTED,  ILLEGAL
            STARTING, TIMED_OUT,  ILLEGAL
            READY,    SETUP_DONE, READY
            READY,    RESTARTED,  READY
            READY,    TIMED_OUT,  LOST
            LOST,     SETUP_DONE, READY
            LOST,     RESTARTED,  READY
            LOST,     TIMED_OUT,  ILLEGAL
            """)
    void transitionTable(WorkerLifecycle from, WorkerEvent event, String expected) {
        if (expected.equals("ILLEGAL")) {
            assertThatThrownBy(() -> from.next(event))
                    .isInstanceOfSatisfying(IllegalWorkerTransitionException.class, e -> {
                        assertThat(e.from()).isEqualTo(from);
                        assertThat(e.event()).isEqualTo(event);
                    })
                    .hasMessageContaining(from.name()).hasMessageContaining(event.name());
        } else {
            assertThat(from.next(event)).isEqualTo(WorkerLifecycle.valueOf(expected));
        }
    }

    @org.junit.jupiter.api.Test
    void theTableAboveCoversEveryPair() {
        // Guards the table against a new state or event added without a row.
        assertThat(WorkerLifecycle.values().length * WorkerEvent.values().length).isEqualTo(9);
        Set<WorkerLifecycle> states = EnumSet.allOf(WorkerLifecycle.class);
        assertThat(states).containsExactly(WorkerLifecycle.STARTING, WorkerLifecycle.READY, WorkerLifecycle.LOST);
    }
}
