package io.mstar.messaging;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Positions the inbox consumer at the end of every partition it is first assigned
 * (docs/architecture.md#restarts-and-ordering: a (re)started process does not replay old traffic) and publishes whether
 * it is positioned. A partition taken away and given back to the same process (a rebalance after a broker restart, say)
 * resumes where this process stopped reading it: seeking to the end there skipped whatever the other services had sent
 * meanwhile, and a request whose message was among them waited for its deadline.
 *
 * <p>Where reading stopped is tracked here, from the records the inbox handled, rather than asked of the consumer when
 * the partition goes: after a broker restart the consumer holds its position unvalidated (a new leader epoch) until the
 * broker answers, and a rebalance in that window made {@code position()} fail, so the partition started at the end
 * again.
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
    /** Where reading goes on in each partition held: the position at assignment, then past each record handled. */
    private final Map<TopicPartition, Long> next = new HashMap<>();
    /** Where this process stopped reading a partition it no longer holds. */
    private final Map<TopicPartition, Long> resumeAt = new HashMap<>();
    private volatile boolean anyPositioned;

    /**
     * Call from the rebalance listener's {@code onPartitionsAssigned}, on the consumer thread. Returns the partitions
     * resumed where this process stopped reading them; the others start at the end.
     */
    public List<TopicPartition> onAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        List<TopicPartition> fresh = new ArrayList<>();
        List<TopicPartition> resumed = new ArrayList<>();
        for (TopicPartition partition : partitions) {
            Long next = resumeAt.remove(partition);
            if (next == null) {
                fresh.add(partition);
            } else {
                consumer.seek(partition, next);
                resumed.add(partition);
            }
        }
        if (!fresh.isEmpty()) {
            // An empty collection would mean every assigned partition, the resumed ones included.
            consumer.seekToEnd(fresh);
        }
        for (TopicPartition partition : partitions) {
            next.put(partition, consumer.position(partition));
        }
        positioned.addAll(partitions);
        anyPositioned = !positioned.isEmpty();
        return resumed;
    }

    /**
     * Call for every record the inbox is done with, handed on or dead-lettered, on the consumer thread: the partition
     * resumes after it.
     */
    public void handled(ConsumerRecord<?, ?> record) {
        next.merge(new TopicPartition(record.topic(), record.partition()), record.offset() + 1, Math::max);
    }

    /** Call from {@code onPartitionsRevoked} and {@code onPartitionsLost}, on the consumer thread. */
    public void onRemoved(Collection<TopicPartition> partitions) {
        for (TopicPartition partition : partitions) {
            Long at = next.remove(partition);
            if (at != null) {
                resumeAt.put(partition, at);
            }
        }
        positioned.removeAll(partitions);
        anyPositioned = !positioned.isEmpty();
    }

    /** True while the consumer holds at least one partition and has resolved its position there. */
    public boolean isPositioned() {
        return anyPositioned;
    }
}
