package io.mstar.worker.kernel.minilm;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.mstar.model.MiniLmModel;

/**
 * Regenerates the golden files from the sentences: ids by the model's tokenizer, embeddings by ONNX Runtime. Run
 * from worker-service after changing {@code sentences.txt}; {@code MiniLmReferenceTests} then proves the files
 * still equal a fresh run, so they cannot drift.
 *
 * <pre>mvn -o -q -pl worker-service exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.mstar.worker.kernel.minilm.MiniLmGoldenWriter -Dexec.args=src/test/resources/io/mstar/worker/kernel/minilm</pre>
 */
public final class MiniLmGoldenWriter {

    private MiniLmGoldenWriter() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        List<String> sentences = MiniLmGolden.sentenceSet();
        List<int[]> ids = new ArrayList<>();
        float[][] embeddings = new float[sentences.size()][];
        try (MiniLmTokenizer tokenizer = MiniLmTokenizer.fromClasspath(); OrtReference ort = new OrtReference()) {
            for (int i = 0; i < sentences.size(); i++) {
                int[] s = tokenizer.encode(sentences.get(i));
                if (s.length > MiniLmModel.MAX_WORD_PIECES) {
                    throw new IllegalStateException("tokenizer did not truncate");
                }
                ids.add(s);
                embeddings[i] = ort.embed(s);
            }
        }
        MiniLmGolden.write(dir, ids, embeddings);
        System.out.println("wrote " + sentences.size() + " sentences to " + dir);
    }
}
