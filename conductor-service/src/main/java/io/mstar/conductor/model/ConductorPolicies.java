package io.mstar.conductor.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The policies this conductor knows, by model name. Immutable. */
public final class ConductorPolicies {

    private final Map<String, ConductorPolicy> byModel = new LinkedHashMap<>();

    public ConductorPolicies(List<ConductorPolicy> policies) {
        for (ConductorPolicy policy : policies) {
            if (byModel.putIfAbsent(policy.model(), policy) != null) {
                throw new IllegalArgumentException("two policies for model " + policy.model());
            }
        }
    }

    /** Every built-in policy. */
    public static ConductorPolicies builtIn() {
        return new ConductorPolicies(List.of(new CounterPolicy(), new ToyTtsPolicy(), new MiniLmPolicy()));
    }

    public Optional<ConductorPolicy> of(String model) {
        return Optional.ofNullable(byModel.get(model));
    }
}
