package io.mstar.worker.resident;

/**
 * A node whose forward runs on resident tables: between the resources' gathers and their commits it records its
 * forward, reading what the gathers filled, and leaves each real row's sampled token in
 * {@link CapturedResidentStep#sampled()}.
 */
public interface ResidentForward {

    /** Records the node's forward into {@code step} (at capture only; replays repeat it). */
    void residentForward(CapturedResidentStep step);
}
