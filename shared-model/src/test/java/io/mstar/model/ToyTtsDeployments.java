package io.mstar.model;

/**
 * Deployment configs serving {@code toy-tts} alone, its KV cache in pages of 16 tokens. Lives in shared-model's
 * test-jar so the worker's in-process engine tests and the end-to-end tests place the model the same way.
 */
public final class ToyTtsDeployments {

    private ToyTtsDeployments() {
    }

    /** The codec on worker 0 and the lm on worker 1 (as built in). */
    public static String disaggregated(int maxNumPages) {
        return header(maxNumPages) + """
                      - node_names: [codec]
                        workers: [0]
                      - node_names: [lm]
                        workers: [1]
                """;
    }

    /** The lm and the codec both on worker 0. */
    public static String colocated(int maxNumPages) {
        return header(maxNumPages) + """
                      - node_names: [lm, codec]
                        workers: [0]
                """;
    }

    private static String header(int maxNumPages) {
        return """
                models:
                  - name: toy-tts
                    kv_cache: {page_size: 16, max_num_pages: %d}
                    node_groups:
                """.formatted(maxNumPages);
    }
}
