package io.mstar.worker.kernel.tts;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.DeviceUploads;
import io.mstar.worker.kernel.Int32Tensors;
import io.mstar.worker.kernel.KernelException;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

/**
 * The toy-tts {@code codec} node: one sliding window of {@code new_token} pairs {@code (generation index, byte)} in,
 * the PCM of its fresh tokens out ({@link ToyTtsSynth}), {@code int16 [fresh * SAMPLES_PER_TOKEN]}. A window whose
 * first token is the stream's first has no context; every later one opens with the policy's
 * {@code window - stride} context tokens (the stream buffer's rule). An empty final chunk emits nothing, so a
 * request gets exactly one audio chunk per window with fresh tokens ({@link ToyTtsModel#audioChunks}). The
 * synthesis is a few thousand samples per window: plain Java through the device's copies, on any device.
 */
public final class ToyTtsCodecKernel implements NodeKernel {

    public static final String PCM_DTYPE = "int16";

    @Override
    public List<NodeResult> forward(Device device, List<NodeCall> batch) {
        List<NodeResult> results = new ArrayList<>(batch.size());
        for (NodeCall call : batch) {
            try {
                results.add(NodeResult.of(window(device, Int32Tensors.read(device, call.input(ToyTtsModel.NEW_TOKEN)))));
            } catch (KernelException e) {
                results.add(NodeResult.failed(e));
            }
        }
        return results;
    }

    private static Map<String, Tensor> window(Device device, int[] pairs) {
        if (pairs.length % 2 != 0) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "new_token holds (index, byte) pairs, got "
                    + pairs.length + " values");
        }
        int n = pairs.length / 2;
        if (n == 0) {
            return Map.of();
        }
        int[] bytes = new int[n];
        for (int i = 0; i < n; i++) {
            bytes[i] = pairs[2 * i + 1];
            if (bytes[i] < 0 || bytes[i] >= ToyTtsModel.BYTES) {
                throw new KernelException(KernelException.Reason.BAD_INPUT, "new_token byte " + bytes[i]);
            }
        }
        int context = pairs[0] == 0 ? 0 : ToyTtsModel.CODEC_WINDOW - ToyTtsModel.CODEC_STRIDE;
        if (context >= n) {
            throw new KernelException(KernelException.Reason.BAD_INPUT, "a window of " + n
                    + " tokens after the first holds no fresh token");
        }
        short[] pcm = ToyTtsSynth.window(bytes, context);
        ByteBuffer samples = ByteBuffer.allocate(pcm.length * Short.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        samples.asShortBuffer().put(pcm);
        // The samples go to the client from the host copy: publishing them then waits for no device work.
        return Map.of(ToyTtsModel.AUDIO, new Tensor(DeviceUploads.upload(device, samples.duplicate()), PCM_DTYPE,
                List.of((long) pcm.length), samples));
    }
}
