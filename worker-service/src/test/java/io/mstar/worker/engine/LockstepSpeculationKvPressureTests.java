package io.mstar.worker.engine;

/**
 * {@link LockstepKvPressureTests} with speculation on: speculated batches reserve only within the pages their requests
 * hold, so the moves each broadcast carries still come from the leader's plain batches, and the follower's resident
 * set matches the leader's at every batch, speculated or not.
 */
class LockstepSpeculationKvPressureTests extends LockstepKvPressureTests {

    @Override
    EngineProperties engine() {
        return super.engine().withSteps(true, EngineProperties.Speculation.ON);
    }
}
