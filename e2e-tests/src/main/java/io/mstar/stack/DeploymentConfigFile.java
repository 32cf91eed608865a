package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The deployment config (docs/architecture.md#deployment-config) every process of a local stack shares, written for
 * N workers. The services' built-in toy model {@code counter} has two node groups; with N workers
 * the even ordinals serve the first and the odd ones the second (data-parallel replicas), and one
 * worker serves both, so any N is a valid deployment of the same graph. toy-tts is disaggregated as built in (its
 * codec on worker 0, its lm on worker 1; both on worker 0 with one worker); minilm-embed runs on worker 0.
 */
final class DeploymentConfigFile {

    private static final String FIRST_GROUP = "embed, offset, detok";
    private static final String SECOND_GROUP = "count, step";

    private DeploymentConfigFile() {
    }

    /** Admission limits (docs/architecture.md#deployment-config); null keeps the services' defaults. */
    record Admission(int maxConcurrentRequests, int maxQueuedRequests) {

        Admission {
            if (maxConcurrentRequests < 1 || maxQueuedRequests < 0) {
                throw new IllegalArgumentException("admission needs at least 1 concurrent request and a queue of 0 or more, not "
                        + maxConcurrentRequests + "/" + maxQueuedRequests);
            }
        }
    }

    static String yaml(int workers) {
        return yaml(workers, null);
    }

    static String yaml(int workers, Admission admission) {
        if (workers < 1) {
            throw new IllegalArgumentException("a stack needs at least one worker, not " + workers);
        }
        List<String> lines = new ArrayList<>();
        lines.add("# Written by the local stack for " + workers + " worker(s); rewritten on every start.");
        if (admission != null) {
            lines.add("max_concurrent_requests: " + admission.maxConcurrentRequests());
            lines.add("max_queued_requests: " + admission.maxQueuedRequests());
        }
        lines.add("models:");
        lines.add("  - name: counter");
        lines.add("    node_groups:");
        if (workers == 1) {
            lines.add("      - node_names: [" + FIRST_GROUP + ", " + SECOND_GROUP + "]");
            lines.add("        workers: [0]");
        } else {
            lines.add("      - node_names: [" + FIRST_GROUP + "]");
            lines.add("        workers: " + ordinals(workers, 0));
            lines.add("      - node_names: [" + SECOND_GROUP + "]");
            lines.add("        workers: " + ordinals(workers, 1));
        }
        lines.add("  - name: toy-tts");
        lines.add("    kv_cache: {page_size: 16, max_num_pages: 512}");
        lines.add("    node_groups:");
        if (workers == 1) {
            lines.add("      - node_names: [codec, lm]");
            lines.add("        workers: [0]");
        } else {
            lines.add("      - node_names: [codec]");
            lines.add("        workers: [0]");
            lines.add("      - node_names: [lm]");
            lines.add("        workers: [1]");
        }
        // minilm-embed (real weights, loaded only by the workers it is placed on) on worker 0, as built in
        lines.add("  - name: minilm-embed");
        lines.add("    node_groups:");
        lines.add("      - node_names: [encode]");
        lines.add("        workers: [0]");
        return String.join("\n", lines) + "\n";
    }

    static Path write(Path file, int workers, Admission admission) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, yaml(workers, admission));
            return file;
        } catch (IOException e) {
            throw new StackException("cannot write the deployment config " + file, e);
        }
    }

    /** Writes {@code yaml} as given (a test's own deployment). */
    static Path write(Path file, String yaml) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, yaml);
            return file;
        } catch (IOException e) {
            throw new StackException("cannot write the deployment config " + file, e);
        }
    }

    private static String ordinals(int workers, int parity) {
        return IntStream.range(0, workers).filter(n -> n % 2 == parity)
                .mapToObj(Integer::toString).collect(Collectors.joining(", ", "[", "]"));
    }
}
