package io.mstar.request;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Sampling configuration of a node with a main head and named auxiliary heads (e.g. the codebook
 * heads of an audio decoder).
 *
 * @param main the main head's config; null means {@link SamplingConfig#DEFAULT}
 * @param aux  auxiliary head name to config; default empty
 */
public record MultiSamplingConfig(SamplingConfig main, Map<String, SamplingConfig> aux) {

    public MultiSamplingConfig {
        main = main == null ? SamplingConfig.DEFAULT : main;
        aux = aux == null ? Collections.emptySortedMap() : Collections.unmodifiableSortedMap(new TreeMap<>(aux));
        if (aux.values().stream().anyMatch(java.util.Objects::isNull)) {
            throw new IllegalArgumentException("aux has a null config");
        }
    }
}
