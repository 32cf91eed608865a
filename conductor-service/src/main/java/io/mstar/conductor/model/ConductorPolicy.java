package io.mstar.conductor.model;

import java.util.Map;

/**
 * The model-specific part of the conductor (docs/architecture.md#a-requests-life, step 6): which walk each partition
 * starts with and what it does after each pass. The conductor owns routing, hand-out counting, seeds and teardown; a
 * policy only decides. Implementations are stateless: everything they need arrives in the arguments, so one instance
 * serves every request and the calls can be tested alone. Called on the lifecycle loop.
 */
public interface ConductorPolicy {

    /** The catalog name of the model this policy drives. */
    String model();

    /**
     * The client inputs the model takes: input name to the dtype it must have. The conductor refuses a request
     * whose inputs differ (400) before storing anything.
     */
    Map<String, String> inputDtypes();

    /** Checks model kwargs and limits that depend on the model; throws {@link ModelInputException}. */
    void validate(PolicyRequest request);

    /** The first step of {@code partition}. */
    Step initial(String partition, PolicyRequest request);

    /** What {@code result.partition()} does after the pass; may throw {@link PolicyException}. */
    Transition next(PassResult result, PolicyRequest request);

    /**
     * Extra metadata for every delivered chunk of {@code signal} with {@code modality} (audio: sample rate and
     * channels), added to the conductor's own keys; none by default.
     */
    default Map<String, Object> chunkMetadata(String modality, String signal) {
        return Map.of();
    }
}
