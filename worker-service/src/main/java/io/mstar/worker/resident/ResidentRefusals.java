package io.mstar.worker.resident;

import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;

/**
 * At load, with resident planning on for the worker's device: every node that refuses it
 * ({@link io.mstar.worker.kernel.NodeKernel#residentRefusal}) is logged once with its reason and counted once in
 * {@code mstar.worker.resident.refusals{reason=resource}}; its steps run eagerly, as they would with it off.
 */
public final class ResidentRefusals {

    private static final Logger log = LoggerFactory.getLogger(ResidentRefusals.class);

    private ResidentRefusals() {
    }

    /** Reports the catalog's refusing nodes; answers how many there are. */
    public static int report(KernelCatalog catalog, MeterRegistry registry) {
        int refused = 0;
        for (ModelKernels model : catalog.models()) {
            for (var node : model.kernels().entrySet()) {
                Optional<String> why = node.getValue().residentRefusal();
                if (why.isPresent()) {
                    log.info("resident planning: node {} of {} runs eagerly: {}", node.getKey(), model.model(),
                            why.get());
                    ResidentStats.refusals(registry, model.model(), node.getKey(), ResidentStats.Refusal.RESOURCE).increment();
                    refused++;
                }
            }
        }
        return refused;
    }
}
