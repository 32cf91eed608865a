package io.mstar.worker.engine;

import org.junit.jupiter.api.Nested;

/**
 * The counter scenarios of {@link CounterAcrossTwoWorkersTests}, whose outputs are predicted exactly, with each step on
 * the loop (the pipeline off) and with speculation on: the same values either way
 * (docs/worker-runtime.md#the-step-pipeline). A counter step takes microseconds, so whether a step is speculated
 * before it completes is up to the threads; {@link SpeculationRandomizedTests} makes sure it is.
 */
class CounterStepModesTests {

    @Nested
    class WithoutThePipeline extends CounterAcrossTwoWorkersTests {
        @Override
        EngineProperties engineSettings() {
            return EngineProperties.defaults().withSteps(false, EngineProperties.Speculation.OFF);
        }
    }

    @Nested
    class Speculating extends CounterAcrossTwoWorkersTests {
        @Override
        EngineProperties engineSettings() {
            return EngineProperties.defaults().withSteps(true, EngineProperties.Speculation.ON);
        }
    }
}
