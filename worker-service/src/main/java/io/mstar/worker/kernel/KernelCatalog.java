package io.mstar.worker.kernel;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The kernels a worker can run, by model name: what {@code NewRequest}s are checked against. */
public final class KernelCatalog {

    private final Map<String, ModelKernels> models = new LinkedHashMap<>();

    public KernelCatalog(List<ModelKernels> models) {
        for (ModelKernels m : models) {
            if (this.models.putIfAbsent(m.model(), m) != null) {
                throw new IllegalArgumentException("kernels for model '" + m.model() + "' given twice");
            }
        }
    }

    /** The kernels of {@code model}; an unknown model is a {@link KernelException}. */
    public ModelKernels model(String model) {
        ModelKernels kernels = models.get(model);
        if (kernels == null) {
            throw new KernelException(KernelException.Reason.NO_KERNEL, "no kernels for model '" + model
                    + "' (have " + models.keySet() + ")");
        }
        return kernels;
    }
}
