package io.mstar.worker.kernel;

import java.util.Map;
import java.util.Objects;

/**
 * A model's kernels by node name, and how its stream-consuming nodes want their chunks.
 *
 * @param model      the catalog name ({@code counter})
 * @param kernels    node name to its kernel
 * @param chunkSizes streaming edge name to tokens per chunk (fixed chunk policy); an edge not listed gets 1
 */
public record ModelKernels(String model, Map<String, NodeKernel> kernels, Map<String, Integer> chunkSizes) {

    public ModelKernels {
        Objects.requireNonNull(model, "model");
        kernels = Map.copyOf(kernels);
        chunkSizes = Map.copyOf(chunkSizes);
    }

    public ModelKernels(String model, Map<String, NodeKernel> kernels) {
        this(model, kernels, Map.of());
    }

    /** Tokens per chunk of streaming edge {@code edge}. */
    public int chunkSize(String edge) {
        return chunkSizes.getOrDefault(edge, 1);
    }

    /** The same kernels with {@code node}'s replaced (tests, and a CUDA kernel set built over the host one). */
    public ModelKernels with(String node, NodeKernel kernel) {
        java.util.Map<String, NodeKernel> copy = new java.util.HashMap<>(kernels);
        copy.put(node, kernel);
        return new ModelKernels(model, copy, chunkSizes);
    }

    /** The kernel of {@code node}; a node without one is a {@link KernelException}. */
    public NodeKernel kernel(String node) {
        NodeKernel kernel = kernels.get(node);
        if (kernel == null) {
            throw new KernelException(KernelException.Reason.NO_KERNEL, "model '" + model + "' has no kernel for node '"
                    + node + "'");
        }
        return kernel;
    }
}
