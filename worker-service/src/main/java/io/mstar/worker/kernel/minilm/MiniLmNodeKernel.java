package io.mstar.worker.kernel.minilm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;

import io.mstar.model.MiniLmModel;
import io.mstar.tensor.device.Device;
import io.mstar.wire.WorkerErrorType;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

/**
 * minilm-embed's {@code encode} node: each call's {@code text} (uint8 UTF-8 bytes, malformed sequences replaced) is
 * tokenized here on the worker, the batch's sentences run as one padded forward pass of the encoder, and each call
 * gets {@code embedding} (float32 [384]) and {@code num_tokens} (int32 [1]). A call whose input is not a 1-D uint8
 * tensor fails alone. Closing it frees the encoder's device memory and the tokenizer.
 */
public final class MiniLmNodeKernel implements NodeKernel, AutoCloseable {

    /** Sentences per forward pass at most: 64 of 256 word-pieces keep the activations near 100 MB. */
    static final int MAX_BATCH = 64;

    /**
     * What is read off the engine thread: the tokenizer and the encoder's {@code model}, which the first batch turns
     * into the encoder on the engine thread (the weights a GPU encoder uploads then, or a host encoder ready to run).
     */
    public record Loaded<M>(M model, MiniLmTokenizer tokenizer) {
    }

    private final CompletableFuture<? extends Loaded<?>> loading;
    private final Supplier<MiniLmEncoder> build;
    private MiniLmTokenizer tokenizer;
    private MiniLmEncoder encoder;
    private boolean closed;

    /** A kernel over a ready tokenizer and encoder (tests, benchmarks). */
    public MiniLmNodeKernel(MiniLmTokenizer tokenizer, MiniLmEncoder encoder) {
        this.loading = null;
        this.build = null;
        this.tokenizer = tokenizer;
        this.encoder = encoder;
    }

    /**
     * A kernel whose model and tokenizer are still {@code loading} (on another thread, so a worker's start-up does
     * not wait for them); the first batch waits for them and builds the encoder with {@code encoderFor} on the
     * engine thread, which owns the device the encoder may upload to.
     */
    public <M> MiniLmNodeKernel(CompletableFuture<Loaded<M>> loading, Function<? super M, MiniLmEncoder> encoderFor) {
        this.loading = loading;
        this.build = () -> encoderFor.apply(loading.join().model());
    }

    private void ready() {
        if (closed) {
            throw new MiniLmException("the minilm-embed kernel is closed");
        }
        if (encoder != null) {
            return;
        }
        Loaded<?> loaded;
        try {
            loaded = loading.join();
        } catch (CompletionException | CancellationException e) {
            throw new MiniLmException("minilm-embed could not be loaded: " + e.getCause(), e);
        }
        tokenizer = loaded.tokenizer();
        encoder = build.get();
    }

    @Override
    public int maxBatchSize() {
        return MAX_BATCH;
    }

    @Override
    public List<NodeResult> forward(Device device, List<NodeCall> batch) {
        ready();
        NodeResult[] results = new NodeResult[batch.size()];
        List<int[]> sentences = new ArrayList<>();
        List<Integer> positions = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            Tensor text = batch.get(i).inputs().get(MiniLmModel.TEXT);
            if (text == null || !MiniLmModel.TEXT_DTYPE.equals(text.dtype()) || text.dims().size() != 1) {
                results[i] = NodeResult.failed(WorkerErrorType.INVALID_INPUT, "minilm-embed needs input '" + MiniLmModel.TEXT
                        + "': a 1-D uint8 tensor of UTF-8 text");
                continue;
            }
            sentences.add(tokenizer.encode(utf8(device, text)));
            positions.add(i);
        }
        float[][] embeddings = encoder.encode(sentences);
        List<DeviceBuffer> made = new ArrayList<>();
        try {
            for (int s = 0; s < sentences.size(); s++) {
                Tensor embedding = floats(device, embeddings[s]);
                made.add(embedding.buffer());
                Tensor count = Int32Tensors.write(device, new int[] {sentences.get(s).length});
                made.add(count.buffer());
                results[positions.get(s)] = NodeResult.of(Map.of(MiniLmModel.EMBEDDING, embedding,
                        MiniLmModel.NUM_TOKENS, count));
            }
        } catch (RuntimeException e) {
            for (DeviceBuffer b : made) {
                device.free(b);
            }
            throw e;
        }
        return List.of(results);
    }

    private static String utf8(Device device, Tensor text) {
        int n = Math.toIntExact(text.elementCount());
        ByteBuffer bytes = ByteBuffer.allocateDirect(n);
        if (n > 0) {
            device.copyToHost(text.buffer(), 0, bytes);
        }
        byte[] array = new byte[n];
        bytes.get(array);
        return new String(array, StandardCharsets.UTF_8);
    }

    private static Tensor floats(Device device, float[] values) {
        return new Tensor(DeviceUploads.floats(device, values), MiniLmModel.EMBEDDING_DTYPE, List.of((long) values.length));
    }

    /**
     * Frees the encoder's device memory (or session) and the tokenizer, waiting for a load still under way; a model
     * that is already an encoder is closed even when no batch came. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (encoder == null && loading != null) {
            try {
                Loaded<?> loaded = loading.join();
                tokenizer = loaded.tokenizer();
                if (loaded.model() instanceof MiniLmEncoder unused) {
                    encoder = unused;
                }
            } catch (CompletionException | CancellationException e) {
                tokenizer = null;
            }
        }
        try {
            if (encoder != null) {
                encoder.close();
            }
        } finally {
            if (tokenizer != null) {
                tokenizer.close();
            }
        }
    }
}
