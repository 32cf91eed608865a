package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumMap;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The worker request's transition table, every (phase, event) pair. */
class RequestPhaseTests {

    /** The whole table: null marks an illegal move. */
    private static final Map<RequestPhase, Map<RequestPhase.Event, RequestPhase>> TABLE = new EnumMap<>(RequestPhase.class);

    static {
        row(RequestPhase.ACTIVE, RequestPhase.FAILED, RequestPhase.DRAINING, RequestPhase.REMOVING, RequestPhase.REMOVED);
        row(RequestPhase.FAILED, null, RequestPhase.DRAINING, RequestPhase.REMOVING, RequestPhase.REMOVED);
        row(RequestPhase.DRAINING, null, RequestPhase.DRAINING, RequestPhase.REMOVING, RequestPhase.REMOVED);
        row(RequestPhase.REMOVING, null, RequestPhase.REMOVING, RequestPhase.REMOVING, RequestPhase.REMOVED);
        row(RequestPhase.REMOVED, null, null, null, null);
    }

    /** Targets in {@link RequestPhase.Event} order: FAIL, DRAIN, REMOVE_DEFERRED, REMOVE. */
    private static void row(RequestPhase from, RequestPhase... targets) {
        Map<RequestPhase.Event, RequestPhase> row = new EnumMap<>(RequestPhase.Event.class);
        for (RequestPhase.Event event : RequestPhase.Event.values()) {
            row.put(event, targets[event.ordinal()]);
        }
        TABLE.put(from, row);
    }

    @ParameterizedTest
    @EnumSource(RequestPhase.class)
    void everyEventFromEveryPhaseMovesAsTheTableSaysOrIsRefusedNamingBoth(RequestPhase from) {
        for (RequestPhase.Event event : RequestPhase.Event.values()) {
            RequestPhase expected = TABLE.get(from).get(event);
            if (expected == null) {
                assertThatThrownBy(() -> from.on(event)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining(from.name()).hasMessageContaining(event.name());
            } else {
                assertThat(from.on(event)).as("%s --%s-->", from, event).isEqualTo(expected);
            }
        }
    }
}
