package io.mstar.controlplane;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Where the deployment config lives ({@code mstar.deployment.*}).
 *
 * @param config path of the deployment YAML (docs/architecture.md#deployment-config); empty (the default) uses the
 *     built-in two-worker config. Every service of a deployment must load the same content: records from a process with
 *     another config digest are dead-lettered.
 */
@ConfigurationProperties("mstar.deployment")
public record DeploymentProperties(@DefaultValue("") String config) {
}
