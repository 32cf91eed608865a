package io.mstar.worker.engine;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.mstar.worker.resident.ResidentMode;
import io.mstar.worker.resident.ResidentSettings;

/**
 * Resident planning's settings (docs/resident-planning.md#settings), beside the other {@code mstar.worker.engine.*}.
 *
 * @param resident             {@code auto} (default: on for a GPU when every resource of the node accepts), {@code on}
 *                             (any device; a host device plans on host tables), {@code off}
 * @param residentCaptureSizes padded batch sizes captured (default 1, 2, 4, 8, 16, 32): a batch runs on the smallest
 *                             that holds it, a larger one eagerly
 */
@ConfigurationProperties("mstar.worker.engine")
public record ResidentProperties(@DefaultValue("auto") ResidentMode resident,
        @DefaultValue({"1", "2", "4", "8", "16", "32"}) List<Integer> residentCaptureSizes) {

    public ResidentSettings settings() {
        return new ResidentSettings(resident, residentCaptureSizes);
    }
}
