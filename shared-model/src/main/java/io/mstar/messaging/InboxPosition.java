package io.mstar.messaging;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Positions the inbox consumer at the end of every partition it is assigned (ARCHITECTURE §3.2: a
 * (re)started process does not replay old traffic) and publishes whether it is positioned.
 *
 * <p>The seek is resolved at once with {@code position()}: Kafka's {@code seekToEnd} is lazy, and a record
 * produced between the assignment and the first fetch would otherwise be skipped, so "positioned" means every
 * record produced from now on will be consumed. Readiness waits for it, and a worker sends its first
 * {@code SetupDone} only after it, so nobody addresses a worker that could still skip the message.
 *
 * <p>The callbacks run on the consumer thread; other threads read only {@link #isPositioned()}.
 */
public final class InboxPosition {

    private final Set<TopicPartition> positioned = new HashSet<>();
    private volatile boolean anyPositioned;

    /** Call from the rebalance listener's {@code onPartitionsAssigned}, on the consumer thread. */
    public void onAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        consumer.seekToEnd(partitions);
        for (TopicPartition partition : partitions) {
            consumer.position(partition);
        }
        positioned.addAll(partitions);
        anyPositioned = !positioned.isEmpty();
    }

    /** Call from {@code onPartitionsRevoked} and {@code onPartitionsLost}, on the consumer thread. */
    public void onRemoved(Collection<TopicPartition> partitions) {
        positioned.removeAll(partitions);
        anyPositioned = !positioned.isEmpty();
    }

    /** True while the consumer holds at least one partition and has resolved its position there. */
    public boolean isPositioned() {
        return anyPositioned;
    }
}
