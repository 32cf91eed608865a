package io.mstar.messaging;

import java.util.regex.Pattern;

/**
 * Who sends and receives control messages (docs/architecture.md#entities-and-ids): {@code conductor} or
 * {@code worker-<n>}, where {@code n} is the worker's ordinal (a StatefulSet pod ordinal on Kubernetes, a launcher
 * index locally). The string form is what travels in the {@code mstar-sender} header and in bodies such as
 * {@code SetupDone.worker_id}.
 */
public record EntityId(String value) {

    // Declared before CONDUCTOR: static initialisers run in order and the constructor needs the pattern.
    private static final String WORKER_PREFIX = "worker-";
    private static final Pattern FORM = Pattern.compile("conductor|worker-(0|[1-9][0-9]{0,8})");

    public static final EntityId CONDUCTOR = new EntityId("conductor");

    public EntityId {
        if (value == null || !FORM.matcher(value).matches()) {
            throw new IllegalArgumentException("entity id must be 'conductor' or 'worker-<ordinal>', was '" + value + "'");
        }
    }

    /** The worker with this ordinal. */
    public static EntityId worker(int ordinal) {
        if (ordinal < 0) {
            throw new IllegalArgumentException("worker ordinal must be >= 0, was " + ordinal);
        }
        return new EntityId(WORKER_PREFIX + ordinal);
    }

    /** Parses the wire form; throws {@link IllegalArgumentException} for anything else. */
    public static EntityId parse(String value) {
        return new EntityId(value);
    }

    public boolean isConductor() {
        return value.equals(CONDUCTOR.value);
    }

    public boolean isWorker() {
        return !isConductor();
    }

    /** The worker's ordinal; fails for the conductor. */
    public int workerOrdinal() {
        if (!isWorker()) {
            throw new IllegalStateException("the conductor has no worker ordinal");
        }
        return Integer.parseInt(value.substring(WORKER_PREFIX.length()));
    }

    @Override
    public String toString() {
        return value;
    }
}
