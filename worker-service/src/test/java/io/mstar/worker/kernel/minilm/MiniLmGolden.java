package io.mstar.worker.kernel.minilm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The fixed sentence set and its reference outputs, as test resources next to this class: {@code sentences.txt}
 * (one per line), {@code golden-ids.txt} (their word-piece ids, one line each) and {@code golden-embeddings.f32}
 * (ONNX Runtime's embeddings of those ids, {@code sentences x 384} little-endian float32). The GPU tests read ids and
 * embeddings from here, so they need neither the tokenizer library nor ONNX Runtime.
 */
record MiniLmGolden(List<String> sentences, List<int[]> ids, float[][] embeddings) {

    static final String SENTENCES = "sentences.txt";
    static final String IDS = "golden-ids.txt";
    static final String EMBEDDINGS = "golden-embeddings.f32";
    static final int DIM = 384;
    /** Cosine every sentence must reach against ONNX Runtime, on any device. */
    static final double MIN_COSINE = 0.9999;

    static List<String> sentenceSet() throws IOException {
        return Arrays.asList(resource(SENTENCES).split("\n"));
    }

    static MiniLmGolden load() throws IOException {
        List<String> sentences = sentenceSet();
        List<int[]> ids = new ArrayList<>();
        for (String line : resource(IDS).split("\n")) {
            ids.add(Arrays.stream(line.trim().split(" ")).mapToInt(Integer::parseInt).toArray());
        }
        byte[] bytes;
        try (InputStream in = MiniLmGolden.class.getResourceAsStream(EMBEDDINGS)) {
            bytes = in.readAllBytes();
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        float[][] embeddings = new float[bytes.length / 4 / DIM][DIM];
        for (float[] e : embeddings) {
            for (int i = 0; i < DIM; i++) {
                e[i] = b.getFloat();
            }
        }
        return new MiniLmGolden(sentences, ids, embeddings);
    }

    /** Writes ids and embeddings into {@code dir} (the source resources folder), overwriting. */
    static void write(Path dir, List<int[]> ids, float[][] embeddings) throws IOException {
        Files.writeString(dir.resolve(IDS), ids.stream()
                .map(a -> Arrays.stream(a).mapToObj(Integer::toString).collect(Collectors.joining(" ")))
                .collect(Collectors.joining("\n")) + "\n");
        ByteBuffer b = ByteBuffer.allocate(embeddings.length * DIM * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float[] e : embeddings) {
            for (float v : e) {
                b.putFloat(v);
            }
        }
        Files.write(dir.resolve(EMBEDDINGS), b.array());
    }

    static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = MiniLmGolden.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("no test resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
