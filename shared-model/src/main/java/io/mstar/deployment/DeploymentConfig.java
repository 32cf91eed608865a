package io.mstar.deployment;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The deployment config shared by every service of one deployment (docs/architecture.md#deployment-config): admission
 * limits, the request deadline, and which workers run which nodes of which model. Every service loads the same file;
 * {@link ConfigDigest} proves they did, and a Kafka record from a process with another digest is dead-lettered.
 *
 * <p>Parsing applies the defaults and validates; an invalid file fails with a
 * {@link DeploymentConfigException} naming the offending key.
 *
 * @param maxConcurrentRequests deployment-wide admitted requests ({@code max_concurrent_requests}, default 64)
 * @param maxQueuedRequests requests waiting for admission before 503 ({@code max_queued_requests}, default 256)
 * @param requestTimeout deadline of a request from submission ({@code request_timeout}, default 600s)
 * @param models the served models, never empty, names unique
 */
public record DeploymentConfig(int maxConcurrentRequests, int maxQueuedRequests, Duration requestTimeout,
        List<ModelConfig> models) {

    /** Classpath location of the built-in two-worker config used when no file is configured. */
    public static final String DEFAULT_RESOURCE = "/io/mstar/deployment/default-deployment.yaml";

    public static final int DEFAULT_MAX_CONCURRENT_REQUESTS = 64;
    public static final int DEFAULT_MAX_QUEUED_REQUESTS = 256;
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(600);
    public static final int DEFAULT_TP_SIZE = 1;

    public DeploymentConfig {
        models = List.copyOf(models);
    }

    /** Parses YAML text; {@code source} names the origin in error messages (a path or resource name). */
    public static DeploymentConfig parse(String yaml, String source) {
        return new DeploymentConfigParser(source, null).parse(yaml);
    }

    /** Loads and validates the file at {@code path}. */
    public static DeploymentConfig load(Path path) {
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new DeploymentConfigException(path.toString(), "", "cannot read file: " + e, e);
        }
        Path folder = path.toAbsolutePath().getParent();
        return new DeploymentConfigParser(path.toString(), folder).parse(text);
    }

    /** Loads the built-in default ({@link #DEFAULT_RESOURCE}): two workers, model {@code counter}. */
    public static DeploymentConfig loadDefault() {
        try (InputStream in = DeploymentConfig.class.getResourceAsStream(DEFAULT_RESOURCE)) {
            if (in == null) {
                throw new DeploymentConfigException(DEFAULT_RESOURCE, "", "resource missing from the class path");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), DEFAULT_RESOURCE);
        } catch (IOException e) {
            throw new DeploymentConfigException(DEFAULT_RESOURCE, "", "cannot read resource: " + e, e);
        }
    }

    /** Loads {@code path}, or the built-in default when it is null or blank (the services' convention). */
    public static DeploymentConfig loadOrDefault(String path) {
        return path == null || path.isBlank() ? loadDefault() : load(Path.of(path.trim()));
    }

    /** Every worker ordinal any node group names, ascending and without duplicates. */
    public SortedSet<Integer> workerOrdinals() {
        SortedSet<Integer> ordinals = new TreeSet<>();
        for (ModelConfig model : models) {
            for (NodeGroupConfig group : model.nodeGroups()) {
                ordinals.addAll(group.workers());
            }
        }
        return java.util.Collections.unmodifiableSortedSet(ordinals);
    }

    /** The digest of this config's canonical form; equal for files that differ only in formatting. */
    public ConfigDigest digest() {
        return ConfigDigest.of(this);
    }
}
