package io.mstar.worker.engine;

/**
 * {@link LockstepEngineTests} on a group of three: two followers run the leader's batches, each from its own FIFO,
 * while only one of them gets the leader's messages late.
 */
class LockstepThreeRanksTests extends LockstepEngineTests {

    @Override
    int ranks() {
        return 3;
    }
}
