package io.mstar.worker.resident;

import io.mstar.tensor.device.DeviceKind;

/** {@code mstar.worker.engine.resident}: whether a node whose resources all accept runs its decode steps on tables. */
public enum ResidentMode {
    /** On a GPU, where a captured step saves the launches and the logits' copy; off on a host device. */
    AUTO,
    /** On any device (a host device runs the same planning with host tables: tests, comparisons). */
    ON,
    OFF;

    public boolean enabled(DeviceKind kind) {
        return this == ON || this == AUTO && kind == DeviceKind.CUDA;
    }
}
