package io.mstar.worker.resident;

import java.util.Optional;

/**
 * What a resource overrides to take part in resident planning (docs/resident-planning.md): a captured decode step
 * reads per-request state off tables on the device; each owner of that state keeps its own table. A resource
 * overrides these only once it has one; the defaults do nothing.
 */
public interface ResidentHooks {

    /**
     * Declare this resource's tables on the node's planner, once, at load. {@code key} is its resource key, under which
     * each step and capture name its stream ({@link ResidentWrites#streams}, {@link CapturedResidentStep#streams}).
     */
    default void bindResident(ResidentPlanner planner, String key) {
    }

    /**
     * Set this resource's cells of {@code rid}'s row: it is new or stale. {@code row} has the planner's narrow
     * columns; the owner of a wide table queues its used cells as a run of their own ({@link ResidentWrites#run}).
     */
    default void residentRow(String rid, int slot, int[] row, ResidentWrites writes) {
    }

    /** Queue this step's per-row changes on {@code plan.writes()}. Host work only: this can run beside a live graph. */
    default void residentStage(ResidentPlan plan) {
    }

    /**
     * Record, inside the capture, the reads that fill what the step's forward addresses. Runs at warm-up and capture
     * only; a replay repeats the kernels. An attention sets {@link CapturedResidentStep#readsTables} or
     * {@link CapturedResidentStep#hostPlanned}, for whether its kernel reads its pages off the tables or a host plan.
     */
    default void residentGather(CapturedResidentStep step) {
    }

    /** Record, inside the capture and after the forward, the step's table updates. */
    default void residentCommit(CapturedResidentStep step) {
    }

    /** Advance the host's copy of the table by the rule {@link #residentCommit} recorded. */
    default void residentAdvance(ResidentPlan plan) {
    }

    /** Why a node holding this resource can't run on resident tables, or empty if it can. */
    default Optional<String> residentRefusal() {
        return Optional.empty();
    }
}
