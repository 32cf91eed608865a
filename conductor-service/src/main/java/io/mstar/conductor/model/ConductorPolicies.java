package io.mstar.conductor.model;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.deployment.ModelConfig;
import io.mstar.model.OnnxModels;

import java.util.ArrayList;
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

    /**
     * The built-in policies, and the stock {@link SinglePassPolicy} for each model of {@code config} made of ONNX
     * files.
     */
    public static ConductorPolicies forDeployment(DeploymentConfig config) {
        List<ConductorPolicy> policies = new ArrayList<>(builtIn().byModel.values());
        for (ModelConfig model : config.models()) {
            model.onnx().ifPresent(onnx -> policies.add(new SinglePassPolicy(model.name(), onnx.inputs(),
                    OnnxModels.RUN)));
        }
        return new ConductorPolicies(policies);
    }

    public Optional<ConductorPolicy> of(String model) {
        return Optional.ofNullable(byModel.get(model));
    }
}
