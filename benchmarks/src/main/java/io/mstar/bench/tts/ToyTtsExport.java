package io.mstar.bench.tts;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.tts.HostLmBackend;
import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.ToyTtsWeights;
import io.mstar.worker.kv.KvCache;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes what {@code benchmarks/python/toy_tts_torch.py} needs to run the same toy-tts language model in PyTorch:
 * {@code weights.f32} (the flat little-endian array the CUDA kernels index) and {@code toy_tts.json} (the model's
 * sizes, every tensor's offset in the array, and a check: the Java reference's logits after a prompt, which the
 * PyTorch model must reproduce before it is timed).
 *
 * <p>Usage: {@code ToyTtsExport DIRECTORY}.
 */
public final class ToyTtsExport {

    static final int[] CHECK_PROMPT = {ToyTtsModel.BOS, 'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'};

    private ToyTtsExport() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: ToyTtsExport DIRECTORY");
        }
        Path dir = Files.createDirectories(Path.of(args[0]));
        ToyTtsWeights weights = ToyTtsWeights.generate();
        float[] values = weights.values();
        ByteBuffer bytes = ByteBuffer.allocate(values.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asFloatBuffer().put(values);
        Files.write(dir.resolve("weights.f32"), bytes.array());

        ToyTtsWeights.Offsets o = weights.offsets();
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("d", ToyTtsWeights.D);
        json.put("layers", ToyTtsWeights.LAYERS);
        json.put("heads", ToyTtsWeights.HEADS);
        json.put("ffn", ToyTtsWeights.FFN);
        json.put("vocab", ToyTtsWeights.VOCAB);
        json.put("norm_eps", ToyTtsWeights.NORM_EPS);
        json.put("logit_scale", ToyTtsWeights.LOGIT_SCALE);
        json.put("eos", ToyTtsModel.EOS);
        Map<String, Object> offsets = new LinkedHashMap<>();
        offsets.put("embedding", o.embedding());
        offsets.put("attn_norm", o.attnNorm());
        offsets.put("wq", o.wq());
        offsets.put("wk", o.wk());
        offsets.put("wv", o.wv());
        offsets.put("wo", o.wo());
        offsets.put("mlp_norm", o.mlpNorm());
        offsets.put("w1", o.w1());
        offsets.put("w2", o.w2());
        offsets.put("final_norm", o.finalNorm());
        offsets.put("head", o.head());
        offsets.put("byte_prior", o.bytePrior());
        offsets.put("inv_freq", o.invFreq());
        offsets.put("total", o.total());
        json.put("offsets", offsets);
        json.put("check_prompt", CHECK_PROMPT);
        json.put("check_logits", referenceLogits(weights));
        Files.writeString(dir.resolve("toy_tts.json"), JsonMapper.builder().build().writerWithDefaultPrettyPrinter()
                .writeValueAsString(json));
        System.out.println("wrote " + dir.resolve("weights.f32") + " (" + values.length + " floats) and "
                + dir.resolve("toy_tts.json"));
    }

    /** The host reference's logits after {@link #CHECK_PROMPT}, fed as one prefill. */
    private static float[] referenceLogits(ToyTtsWeights weights) {
        try (HostDevice device = new HostDevice(HostDevice.NAME, 16 << 20);
                KvCache cache = new KvCache(device, new KvCacheConfig(16, 4), ToyTtsWeights.BYTES_PER_TOKEN)) {
            cache.addRequest("check");
            int first = cache.appendTokens("check", CHECK_PROMPT.length);
            float[][] logits = new HostLmBackend(weights).run(device, cache.pool(), cache.layout(),
                    List.of(new LmJob(Arrays.copyOf(CHECK_PROMPT, CHECK_PROMPT.length), first, cache.pages("check"),
                            true)));
            cache.releaseRequest("check");
            return logits[0];
        }
    }
}
