package io.mstar.worker.engine;

/**
 * {@link LockstepEngineTests} with the pipeline's speculation on: the leader broadcasts the step it speculates on a
 * running one, and the follower runs it once the step it continues closed here, without the calls that step
 * finished; the tests' lockstep checks (every rank ran the same batches, the collective's hash of each) hold as they
 * are, and every lead step that ran is followed by exactly one decision.
 */
class LockstepSpeculationTests extends LockstepEngineTests {

    @Override
    EngineProperties engine() {
        return super.engine().withSteps(true, EngineProperties.Speculation.ON);
    }
}
