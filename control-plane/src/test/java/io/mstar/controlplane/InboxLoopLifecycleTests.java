package io.mstar.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;

class InboxLoopLifecycleTests {

    @Test
    void aLoopStartsBeforeTheListenerContainersAndStopsAfterThem() {
        InboxLoopLifecycle loop = new InboxLoopLifecycle() {
            @Override
            public void start() {
            }

            @Override
            public void stop() {
            }

            @Override
            public boolean isRunning() {
                return false;
            }
        };

        // Spring starts lower phases first and stops them last.
        assertThat(loop.getPhase()).isLessThan(AbstractMessageListenerContainer.DEFAULT_PHASE);
    }
}
