package io.mstar.conductor.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumMap;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class RequestStateTests {

    /** The whole table: null marks an illegal move. */
    private static final Map<RequestState, Map<RequestEvent, RequestState>> TABLE = new EnumMap<>(RequestState.class);

    static {
        row(RequestState.QUEUED, RequestState.RUNNING, null, RequestState.REMOVED, RequestState.REMOVED, null);
        row(RequestState.RUNNING, null, RequestState.DRAINING, RequestState.DRAINING, RequestState.DRAINING, null);
        row(RequestState.DRAINING, null, null, RequestState.DRAINING, RequestState.DRAINING, RequestState.REMOVED);
        row(RequestState.REMOVED, null, null, RequestState.REMOVED, RequestState.REMOVED, null);
    }

    /** Targets in {@link RequestEvent} order: ADMIT, FINISH, ABORT, FAIL, DRAINED. */
    private static void row(RequestState from, RequestState... targets) {
        Map<RequestEvent, RequestState> row = new EnumMap<>(RequestEvent.class);
        for (RequestEvent event : RequestEvent.values()) {
            row.put(event, targets[event.ordinal()]);
        }
        TABLE.put(from, row);
    }

    @ParameterizedTest
    @EnumSource(RequestState.class)
    void everyEventFromEveryStateMovesAsTheTableSaysOrIsRefusedNamingBothEnds(RequestState from) {
        for (RequestEvent event : RequestEvent.values()) {
            RequestState expected = TABLE.get(from).get(event);
            if (expected == null) {
                assertThatThrownBy(() -> from.next(event)).isInstanceOf(IllegalRequestTransitionException.class)
                        .hasMessageContaining(from.name()).hasMessageContaining(event.name());
            } else {
                assertThat(from.next(event)).as("%s --%s-->", from, event).isEqualTo(expected);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(RequestState.class)
    void endedMeansDrainingOrRemoved(RequestState state) {
        assertThat(state.ended()).isEqualTo(state == RequestState.DRAINING || state == RequestState.REMOVED);
    }
}
