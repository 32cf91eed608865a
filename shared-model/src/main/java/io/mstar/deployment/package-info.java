/**
 * The deployment config (docs/architecture.md#deployment-config): which workers run which nodes of which model,
 * admission limits and the request deadline. {@link io.mstar.deployment.DeploymentConfig} parses and validates the
 * YAML; {@link io.mstar.deployment.ConfigDigest} fingerprints its meaning so processes started from different configs
 * refuse each other's records. The built-in default is {@code default-deployment.yaml} next to these classes: two
 * workers, model {@code counter} with {@code embed, offset, detok} on worker 0 and {@code count, step} on worker 1.
 */
package io.mstar.deployment;
