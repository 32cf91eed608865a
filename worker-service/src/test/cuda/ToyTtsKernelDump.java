import java.io.*;
import java.nio.*;
import java.util.*;
import io.mstar.deployment.KvCacheConfig;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.tts.*;
import io.mstar.worker.kv.KvCache;

/**
 * Writes dump.bin for toy_tts_emulate.cpp: the toy-tts weights, three requests of 5, 31 and 200 tokens (a prefill of
 * all but the last token, then one decode step, pages interleaved across requests; 200 positions are more than one
 * pass of a head's 128 attention threads) and the logits HostLmBackend computes after each.
 * Run: {@code java -cp <worker-service, shared-model, tensor-runtime classes>:<slf4j-api> ToyTtsKernelDump.java}.
 */
public class ToyTtsKernelDump {
    public static void main(String[] a) throws Exception {
        ToyTtsWeights w = ToyTtsWeights.generate();
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream("dump.bin")))) {
            float[] v = w.values();
            out.writeInt(Integer.reverseBytes(v.length));
            for (float f : v) out.writeInt(Integer.reverseBytes(Float.floatToRawIntBits(f)));
            HostLmBackend b = new HostLmBackend(w);
            try (HostDevice d = new HostDevice("host", 64 << 20)) {
                KvCache c = new KvCache(d, new KvCacheConfig(4, 64), ToyTtsWeights.BYTES_PER_TOKEN);
                Random r = new Random(3);
                int jobs = 3;
                int[][] seqs = new int[jobs][];
                for (int j = 0; j < jobs; j++) {
                    c.addRequest("r" + j);
                    seqs[j] = new int[new int[] {5, 31, 200}[j]];
                    seqs[j][0] = 256;
                    for (int i = 1; i < seqs[j].length; i++) seqs[j][i] = r.nextInt(256);
                }
                // launch 1: prefill all but last (interleaved page allocation)
                List<LmJob> l1 = new ArrayList<>();
                for (int j = 0; j < jobs; j++) {
                    int[] feed = Arrays.copyOf(seqs[j], seqs[j].length - 1);
                    l1.add(new LmJob(feed, c.appendTokens("r" + j, feed.length), new int[0], false));
                }
                for (int j = 0; j < jobs; j++) c.appendTokens("r" + j, 1);
                List<LmJob> l1b = new ArrayList<>();
                List<LmJob> l2 = new ArrayList<>();
                for (int j = 0; j < jobs; j++) {
                    int[] pages = c.pages("r" + j);
                    l1b.add(new LmJob(l1.get(j).tokens(), 0, pages, true));
                    l2.add(new LmJob(new int[] {seqs[j][seqs[j].length - 1]}, seqs[j].length - 1, pages, true));
                }
                float[][] prefill = b.run(d, c.pool(), c.layout(), l1b);
                float[][] decode = b.run(d, c.pool(), c.layout(), l2);
                out.writeInt(Integer.reverseBytes(jobs));
                for (int j = 0; j < jobs; j++) {
                    out.writeInt(Integer.reverseBytes(seqs[j].length));
                    for (int t : seqs[j]) out.writeInt(Integer.reverseBytes(t));
                    int[] pages = c.pages("r" + j);
                    out.writeInt(Integer.reverseBytes(pages.length));
                    for (int p : pages) out.writeInt(Integer.reverseBytes(p));
                    for (float f : prefill[j]) out.writeInt(Integer.reverseBytes(Float.floatToRawIntBits(f)));
                    for (float f : decode[j]) out.writeInt(Integer.reverseBytes(Float.floatToRawIntBits(f)));
                }
                c.close();
            }
        }
        System.out.println("dumped");
    }
}
