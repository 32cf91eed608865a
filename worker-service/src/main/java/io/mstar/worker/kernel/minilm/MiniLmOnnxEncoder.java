package io.mstar.worker.kernel.minilm;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kernel.onnx.OnnxModelException;
import io.mstar.worker.kernel.onnx.OnnxSessions;
import io.mstar.worker.kernel.onnx.OrtTensors;

/**
 * The encoder as ONNX Runtime runs the model's own ONNX file (the file {@link MiniLmWeights} reads): what a host
 * worker runs. A batch goes in padded ({@link PaddedBatch}) as {@code input_ids}, {@code attention_mask} (1 on real
 * word-pieces) and, when the graph takes it, {@code token_type_ids} (0: one segment), in the integer type the graph
 * declares; {@code last_hidden_state} comes back and is pooled by {@link MiniLmHostKernels#meanPoolNormalize}, as on
 * every device.
 */
public final class MiniLmOnnxEncoder implements MiniLmEncoder {

    public static final String INPUT_IDS = "input_ids";
    public static final String ATTENTION_MASK = "attention_mask";
    public static final String TOKEN_TYPE_IDS = "token_type_ids";
    public static final String LAST_HIDDEN_STATE = "last_hidden_state";

    private final String model;
    private final MiniLmConfig config;
    private final OrtSession session;
    private final Map<String, OnnxJavaType> inputTypes = new HashMap<>();
    private boolean closed;

    /** The model at {@code model} (a path or {@code classpath:} resource), on {@code intraOpThreads} threads. */
    public MiniLmOnnxEncoder(String model, MiniLmConfig config, int intraOpThreads) {
        this.model = model;
        this.config = config;
        this.session = OnnxSessions.open(model, intraOpThreads);
        try {
            Map<String, NodeInfo> inputs = session.getInputInfo();
            for (String name : List.of(INPUT_IDS, ATTENTION_MASK, TOKEN_TYPE_IDS)) {
                NodeInfo info = inputs.get(name);
                if (info == null && !name.equals(TOKEN_TYPE_IDS)) {
                    throw new OnnxModelException("minilm-embed: ONNX model " + model + " has no input '" + name
                            + "'; its inputs are " + inputs.keySet());
                }
                if (info != null) {
                    OnnxJavaType type = ((TensorInfo) info.getInfo()).type;
                    if (type != OnnxJavaType.INT64 && type != OnnxJavaType.INT32) {
                        throw new OnnxModelException("minilm-embed: input '" + name + "' of " + model + " takes "
                                + type + ", not INT64 or INT32");
                    }
                    inputTypes.put(name, type);
                }
            }
            NodeInfo hidden = session.getOutputInfo().get(LAST_HIDDEN_STATE);
            long[] shape = hidden == null ? null : ((TensorInfo) hidden.getInfo()).getShape();
            if (shape == null || shape.length != 3 || shape[2] != config.hidden()) {
                throw new OnnxModelException("minilm-embed: ONNX model " + model + " has no output '" + LAST_HIDDEN_STATE
                        + "' of [batch, sequence, " + config.hidden() + "]; its outputs are " + session.getOutputInfo());
            }
        } catch (OrtException e) {
            throw OnnxSessions.closeAfter(session, new OnnxModelException("minilm-embed: ONNX model " + model + ": "
                    + e.getMessage(), e));
        } catch (RuntimeException e) {
            throw OnnxSessions.closeAfter(session, e);
        }
    }

    /**
     * The file {@link MiniLmWeights#fromSystemPropertyOrClasspath} reads, on as many threads as the JVM has processors
     * (see {@code OnnxNodeSpec.perRequest} for why).
     */
    public static MiniLmOnnxEncoder fromSystemPropertyOrClasspath() {
        return new MiniLmOnnxEncoder(MiniLmWeights.onnxLocation(), MiniLmConfig.ALL_MINILM_L6_V2,
                Runtime.getRuntime().availableProcessors());
    }

    @Override
    public MiniLmConfig config() {
        return config;
    }

    @Override
    public float[][] encode(List<int[]> sentences) {
        if (closed) {
            throw new IllegalStateException("the minilm-embed ONNX encoder is closed");
        }
        MiniLmEncoder.check(config, sentences);
        if (sentences.isEmpty()) {
            return new float[0][];
        }
        PaddedBatch batch = PaddedBatch.of(sentences);
        long[] shape = {batch.batch(), batch.length()};
        int[] mask = new int[batch.rows()];
        for (int b = 0; b < batch.batch(); b++) {
            Arrays.fill(mask, b * batch.length(), b * batch.length() + batch.lengths()[b], 1);
        }
        Map<String, OnnxTensor> feeds = new HashMap<>();
        try {
            feeds.put(INPUT_IDS, OrtTensors.integers(batch.ids(), inputTypes.get(INPUT_IDS), shape));
            feeds.put(ATTENTION_MASK, OrtTensors.integers(mask, inputTypes.get(ATTENTION_MASK), shape));
            if (inputTypes.containsKey(TOKEN_TYPE_IDS)) {
                feeds.put(TOKEN_TYPE_IDS, OrtTensors.integers(new int[batch.rows()], inputTypes.get(TOKEN_TYPE_IDS),
                        shape));
            }
            float[] hidden;
            try (OrtSession.Result result = session.run(feeds, Set.of(LAST_HIDDEN_STATE))) {
                hidden = OrtTensors.floats(OrtTensors.tensor(result.get(0), LAST_HIDDEN_STATE));
            }
            int h = config.hidden();
            if (hidden.length != batch.rows() * h) {
                throw new KernelException(KernelException.Reason.RUN_FAILED, "minilm-embed: " + model + " returned "
                        + hidden.length + " hidden values for " + batch.rows() + " positions of " + h);
            }
            float[] pooled = new float[batch.batch() * h];
            MiniLmHostKernels.meanPoolNormalize(hidden, batch.lengths(), batch.batch(), batch.length(), h, pooled);
            float[][] out = new float[batch.batch()][];
            for (int b = 0; b < out.length; b++) {
                out[b] = Arrays.copyOfRange(pooled, b * h, (b + 1) * h);
            }
            return out;
        } catch (OrtException e) {
            throw new KernelException(KernelException.Reason.RUN_FAILED, "minilm-embed: ONNX Runtime failed on "
                    + model + ": " + e.getMessage(), e);
        } finally {
            OnnxValue.close(feeds);
        }
    }

    /** Closes the session, once. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        OnnxSessions.close(session, "minilm-embed (" + model + ")");
    }
}
