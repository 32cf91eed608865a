package io.mstar.worker.kernel.minilm;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

/**
 * ONNX Runtime running the model's own ONNX graph on given ids, followed by the sentence-transformers pooling
 * (mean over the attention mask, in double, then L2 normalisation): the reference minilm-embed must match.
 */
final class OrtReference implements AutoCloseable {

    private final OrtEnvironment env = OrtEnvironment.getEnvironment();
    private final OrtSession session;

    OrtReference() throws IOException, OrtException {
        byte[] model;
        try (InputStream in = OrtReference.class.getClassLoader().getResourceAsStream(MiniLmWeights.ONNX_RESOURCE)) {
            model = in.readAllBytes();
        }
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(2);
            session = env.createSession(model, options);
        }
    }

    float[] embed(int[] ids) throws OrtException {
        long[][] input = new long[1][ids.length];
        long[][] mask = new long[1][ids.length];
        long[][] types = new long[1][ids.length];
        for (int i = 0; i < ids.length; i++) {
            input[0][i] = ids[i];
            mask[0][i] = 1;
        }
        try (OnnxTensor a = OnnxTensor.createTensor(env, input);
                OnnxTensor m = OnnxTensor.createTensor(env, mask);
                OnnxTensor t = OnnxTensor.createTensor(env, types);
                OrtSession.Result result = session.run(Map.of("input_ids", a, "attention_mask", m, "token_type_ids", t))) {
            float[][] hidden = ((float[][][]) result.get(0).getValue())[0];
            int width = hidden[0].length;
            double[] mean = new double[width];
            for (float[] row : hidden) {
                for (int c = 0; c < width; c++) {
                    mean[c] += row[c];
                }
            }
            double norm = 0;
            for (int c = 0; c < width; c++) {
                mean[c] /= hidden.length;
                norm += mean[c] * mean[c];
            }
            norm = Math.sqrt(norm);
            float[] out = new float[width];
            for (int c = 0; c < width; c++) {
                out[c] = (float) (mean[c] / norm);
            }
            return out;
        }
    }

    @Override
    public void close() throws OrtException {
        session.close();
    }
}
