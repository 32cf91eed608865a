package io.mstar.deployment;

/**
 * A deployment config that cannot be read or is invalid. {@link #key()} names the offending key as a path
 * ({@code models[0].node_groups[1].workers}) so an operator can find it in the file; it is empty when the
 * whole document is at fault (unreadable file, not YAML).
 */
public final class DeploymentConfigException extends RuntimeException {

    private final String key;

    public DeploymentConfigException(String source, String key, String problem) {
        this(source, key, problem, null);
    }

    public DeploymentConfigException(String source, String key, String problem, Throwable cause) {
        super(source + ": " + (key.isEmpty() ? "" : key + ": ") + problem, cause);
        this.key = key;
    }

    /** The path of the offending key, or empty for the whole document. */
    public String key() {
        return key;
    }
}
