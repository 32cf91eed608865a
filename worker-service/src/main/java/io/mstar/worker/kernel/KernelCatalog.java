package io.mstar.worker.kernel;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kernels a worker can run, by model name: what {@code NewRequest}s are checked against. Closing it closes the
 * kernels that hold resources ({@link AutoCloseable} ones: model weights on the device), before the device closes.
 */
public final class KernelCatalog implements AutoCloseable {

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

    /** Every model's kernels, in the order given. */
    public List<ModelKernels> models() {
        return List.copyOf(models.values());
    }

    /** Closes every {@link AutoCloseable} kernel once; the first failure is rethrown after trying them all. */
    @Override
    public void close() {
        RuntimeException first = null;
        for (ModelKernels m : models.values()) {
            for (NodeKernel k : m.kernels().values()) {
                if (k instanceof AutoCloseable c) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        if (first == null) {
                            first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                        }
                    }
                }
            }
        }
        models.clear();
        if (first != null) {
            throw first;
        }
    }
}
