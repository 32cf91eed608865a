package io.mstar.worker.kernel.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.deployment.DeploymentConfig;
import io.mstar.worker.kernel.ModelKernels;

/** A deployment's ONNX models as one worker loads them: only its own nodes, and a bad file stops it naming all. */
class OnnxModelKernelsTests {

    private static String deployment(String hiddenFile, String headFile) {
        return """
                models:
                  - name: mine
                    onnx:
                      inputs: {x: float32}
                      outputs: [y]
                      nodes:
                        - {name: hidden, file: %s, inputs: {x: x}, outputs: {y: h}}
                        - {name: head, file: %s, inputs: {h: x}, outputs: {y: y}}
                    node_groups:
                      - {node_names: [hidden], workers: [0]}
                      - {node_names: [head], workers: [1]}
                """.formatted(hiddenFile, headFile);
    }

    @Test
    void eachWorkerOpensTheNodesPlacedOnItAlone(@TempDir Path dir) throws Exception {
        Path dense = OnnxTestModels.Dense.write(dir, new Random(3), 4, 4).file();
        Path file = Files.writeString(dir.resolve("deployment.yaml"), deployment(dense.getFileName().toString(),
                dense.getFileName().toString()));
        DeploymentConfig config = DeploymentConfig.load(file);
        List<ModelKernels> zero = OnnxModelKernels.forWorker(config, 0);
        List<ModelKernels> one = OnnxModelKernels.forWorker(config, 1);
        try {
            assertThat(zero).singleElement().satisfies(m -> assertThat(m.kernels()).containsOnlyKeys("hidden"));
            assertThat(one).singleElement().satisfies(m -> assertThat(m.kernels()).containsOnlyKeys("head"));
            assertThat(OnnxModelKernels.forWorker(config, 2)).isEmpty();
        } finally {
            zero.forEach(m -> m.kernels().values().forEach(k -> ((OnnxNodeKernel) k).close()));
            one.forEach(m -> m.kernels().values().forEach(k -> ((OnnxNodeKernel) k).close()));
        }
    }

    @Test
    void aMalformedFileStopsTheWorkerNamingTheModelTheNodeAndTheFile(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("garbage.onnx"), new byte[] {1, 2, 3, 4, 5, 6, 7});
        Path dense = OnnxTestModels.Dense.write(dir, new Random(3), 4, 4).file();
        Path file = Files.writeString(dir.resolve("deployment.yaml"), deployment(dense.getFileName().toString(),
                "garbage.onnx"));
        assertThatThrownBy(() -> OnnxModelKernels.forWorker(DeploymentConfig.load(file), 1))
                .isInstanceOf(OnnxModelException.class).hasMessageContaining("model 'mine', node 'head'")
                .hasMessageContaining(dir.resolve("garbage.onnx").toString());
    }
}
