package io.mstar.controlplane;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.mstar.deployment.DeploymentConfigException;

/** Turns an invalid deployment config into one readable start-up failure naming the file and the key. */
public final class DeploymentConfigFailureAnalyzer extends AbstractFailureAnalyzer<DeploymentConfigException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DeploymentConfigException cause) {
        return new FailureAnalysis("The deployment config is invalid: " + cause.getMessage(),
                "Fix the file named by mstar.deployment.config (or leave it empty for the built-in default); "
                        + "every service of the deployment must load the same content.", cause);
    }
}
