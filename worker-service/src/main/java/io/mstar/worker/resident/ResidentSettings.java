package io.mstar.worker.resident;

import java.util.List;

/**
 * Resident planning's settings for a node's kernel.
 *
 * @param mode         whether it runs (per device kind)
 * @param captureSizes padded batch sizes captured, each a graph (two per walk); a larger batch runs eagerly
 */
public record ResidentSettings(ResidentMode mode, List<Integer> captureSizes) {

    public static final List<Integer> DEFAULT_CAPTURE_SIZES = List.of(1, 2, 4, 8, 16, 32);

    public ResidentSettings {
        if (mode == null) {
            mode = ResidentMode.AUTO;
        }
        captureSizes = captureSizes == null || captureSizes.isEmpty() ? DEFAULT_CAPTURE_SIZES
                : List.copyOf(captureSizes);
        for (int size : captureSizes) {
            if (size < 1 || size > 1024) {
                throw new IllegalArgumentException("mstar.worker.engine.resident-capture-sizes must be within 1..1024, got "
                        + captureSizes);
            }
        }
    }

    public static ResidentSettings of(ResidentMode mode) {
        return new ResidentSettings(mode, DEFAULT_CAPTURE_SIZES);
    }

    public int largestCapture() {
        return captureSizes.stream().mapToInt(Integer::intValue).max().orElseThrow();
    }
}
