package io.mstar.tensor.collective;

/** What a {@link Collective} call was doing when it failed: named in every {@link CollectiveException}. */
public enum CollectiveOperation {
    /** Making the communicator: every rank must arrive before the first call. */
    JOIN,
    ALL_REDUCE_SUM,
    BROADCAST,
    ALL_GATHER,
    BARRIER
}
