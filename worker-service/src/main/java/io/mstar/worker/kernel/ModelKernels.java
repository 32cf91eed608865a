package io.mstar.worker.kernel;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import io.mstar.worker.streaming.ChunkPolicy;
import io.mstar.worker.streaming.FixedChunkPolicy;

/**
 * A model's kernels by node name, and how its stream-consuming nodes want their chunks: the chunk policy belongs
 * with the kernels because it is the consuming kernel that needs windows or left context, not the graph.
 *
 * @param model         the catalog name ({@code counter})
 * @param kernels       node name to its kernel
 * @param chunkPolicies streaming edge name to its chunk policy; an edge not listed gets {@code FixedChunkPolicy(1)}
 */
public record ModelKernels(String model, Map<String, NodeKernel> kernels, Map<String, ChunkPolicy> chunkPolicies) {

    private static final ChunkPolicy ONE_BY_ONE = new FixedChunkPolicy(1);

    public ModelKernels {
        Objects.requireNonNull(model, "model");
        kernels = Map.copyOf(kernels);
        chunkPolicies = Map.copyOf(chunkPolicies);
    }

    public ModelKernels(String model, Map<String, NodeKernel> kernels) {
        this(model, kernels, Map.of());
    }

    /** How streaming edge {@code edge} is cut into chunks for its consuming node. */
    public ChunkPolicy chunkPolicy(String edge) {
        return chunkPolicies.getOrDefault(edge, ONE_BY_ONE);
    }

    /** The same kernels with {@code node}'s replaced (tests, and a CUDA kernel set built over the host one). */
    public ModelKernels with(String node, NodeKernel kernel) {
        Map<String, NodeKernel> copy = new HashMap<>(kernels);
        copy.put(node, kernel);
        return new ModelKernels(model, copy, chunkPolicies);
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
