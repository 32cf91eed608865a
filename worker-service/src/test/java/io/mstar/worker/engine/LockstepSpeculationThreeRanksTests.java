package io.mstar.worker.engine;

/** {@link LockstepSpeculationTests} on a group of three: each follower derives the leader's speculated batches alone. */
class LockstepSpeculationThreeRanksTests extends LockstepSpeculationTests {

    @Override
    int ranks() {
        return 3;
    }
}
