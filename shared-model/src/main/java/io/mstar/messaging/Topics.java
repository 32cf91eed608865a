package io.mstar.messaging;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Topic names of one deployment (docs/architecture.md#topics-keys-and-headers). The prefix lets one Kafka cluster host
 * several deployments; it defaults to {@code mstar}.
 * <ul>
 *   <li>{@code <prefix>.conductor}: every {@code ConductorMessage};</li>
 *   <li>{@code <prefix>.worker.<entity>} (e.g. {@code mstar.worker.worker-0}): every {@code WorkerMessage} for
 *       that worker, from the conductor and from peers;</li>
 *   <li>{@code <prefix>.dlq}: records a receiver could not decode or rejected, with headers saying why.</li>
 * </ul>
 */
public record Topics(String prefix) {

    public static final String DEFAULT_PREFIX = "mstar";

    /** Kafka's legal topic characters; the longest name ({@code .worker.worker-NNNNNNNNN}) must stay under 249. */
    private static final Pattern LEGAL_PREFIX = Pattern.compile("[A-Za-z0-9._-]{1,200}");

    public Topics {
        if (prefix == null || !LEGAL_PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException(
                    "topic prefix must be 1-200 characters of [A-Za-z0-9._-], was '" + prefix + "'");
        }
    }

    public static Topics withDefaultPrefix() {
        return new Topics(DEFAULT_PREFIX);
    }

    public String conductor() {
        return prefix + ".conductor";
    }

    public String worker(EntityId worker) {
        if (!worker.isWorker()) {
            throw new IllegalArgumentException("not a worker: " + worker);
        }
        return prefix + ".worker." + worker.value();
    }

    public String worker(int ordinal) {
        return worker(EntityId.worker(ordinal));
    }

    public String deadLetter() {
        return prefix + ".dlq";
    }

    /** The topic an entity consumes from. */
    public String inbox(EntityId entity) {
        return entity.isConductor() ? conductor() : worker(entity);
    }

    /** Every topic of a deployment with these workers: conductor, one per worker, dead-letter. */
    public List<String> all(Collection<Integer> workerOrdinals) {
        List<String> names = new ArrayList<>();
        names.add(conductor());
        for (int ordinal : workerOrdinals) {
            names.add(worker(ordinal));
        }
        names.add(deadLetter());
        return List.copyOf(names);
    }

    /** Consumer group of an entity: {@code <prefix>.conductor} or {@code <prefix>.worker-<n>}. */
    public String consumerGroup(EntityId entity) {
        return prefix + "." + entity.value();
    }
}
