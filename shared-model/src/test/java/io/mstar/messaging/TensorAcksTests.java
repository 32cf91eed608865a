package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.wire.TensorReceived;

class TensorAcksTests {

    private static final EntityId W0 = EntityId.worker(0);
    private static final EntityId W1 = EntityId.worker(1);

    private record Sent(EntityId producer, TensorReceived message) {
    }

    private final TensorAcks acks = new TensorAcks();
    private final List<Sent> sent = new ArrayList<>();

    @Test
    void aTurnsAcksGoOutAsOneMessagePerRequestAndProducer() {
        acks.landed("r-1", W1, 10);
        acks.landed("r-1", W1, 11);
        acks.landed("r-1", W0, 20);
        acks.landed("r-1", W1, 10); // a second routed copy of the same tensor read
        acks.failed("r-1", W1, 12);
        acks.landed("r-2", W1, 30);

        acks.flush((producer, message) -> sent.add(new Sent(producer, message)));

        assertThat(sent).containsExactly(
                new Sent(W1, new TensorReceived("r-1", Map.of(10L, 2, 11L, 1), List.of(12L))),
                new Sent(W0, new TensorReceived("r-1", Map.of(20L, 1), List.of())),
                new Sent(W1, new TensorReceived("r-2", Map.of(30L, 1), List.of())));
        assertThat(acks.isEmpty()).isTrue();
    }

    @Test
    void aFlushStartsOverSoNothingIsAcknowledgedTwice() {
        acks.landed("r-1", W1, 10);
        acks.flush((producer, message) -> sent.add(new Sent(producer, message)));
        acks.flush((producer, message) -> sent.add(new Sent(producer, message)));
        acks.landed("r-1", W1, 11);
        acks.flush((producer, message) -> sent.add(new Sent(producer, message)));

        assertThat(sent).extracting(s -> s.message().successfulTensors())
                .containsExactly(Map.of(10L, 1), Map.of(11L, 1));
    }

    @Test
    void oneRequestsAcksCanGoAheadOfTheTurnsEnd() {
        acks.landed("r-1", W1, 10);
        acks.landed("r-2", W1, 20);

        acks.flush("r-1", (producer, message) -> sent.add(new Sent(producer, message)));
        assertThat(sent).extracting(s -> s.message().requestId()).containsExactly("r-1");
        assertThat(acks.isEmpty()).isFalse();

        acks.flush("r-3", (producer, message) -> sent.add(new Sent(producer, message)));
        acks.flush((producer, message) -> sent.add(new Sent(producer, message)));
        assertThat(sent).extracting(s -> s.message().requestId()).containsExactly("r-1", "r-2");
        assertThat(acks.isEmpty()).isTrue();
    }
}
