package io.mstar.worker.kernel;

import java.util.List;
import java.util.Optional;

import io.mstar.tensor.device.Device;

/**
 * The computation of one graph node (docs/architecture.md#worker-internals): a model is its graph, one kernel per node
 * and a conductor policy. Called on the worker's step thread (on the engine loop with the pipeline off), one batch at a
 * time, with requests that are all in the same walk.
 *
 * <p>Contract: {@link #forward} answers exactly one {@link NodeResult} per call, in order. A per-request problem
 * (bad input shape, out of memory for that request) is a {@link NodeResult#failed} result: that request fails
 * alone. An exception fails every request of the batch; before throwing, the kernel frees what it allocated.
 * A {@code DeviceException} that is fatal fails the whole worker.
 */
public interface NodeKernel {

    /** The engine's limit for one batch of this node; the scheduler never exceeds it. */
    default int maxBatchSize() {
        return 64;
    }

    List<NodeResult> forward(Device device, List<NodeCall> batch);

    /**
     * Why this node's steps cannot run on resident tables (docs/resident-planning.md), or empty when they can: a node
     * plans only once it holds per-request state on the device that its resources table.
     */
    default Optional<String> residentRefusal() {
        return Optional.of(NO_RESIDENT_STATE);
    }

    /** The refusal of a node with no per-request device state. */
    String NO_RESIDENT_STATE = "keeps no per-request state on the device: nothing to plan";
}
