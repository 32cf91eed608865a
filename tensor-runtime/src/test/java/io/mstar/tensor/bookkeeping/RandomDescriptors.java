package io.mstar.tensor.bookkeeping;

import io.mstar.graph.TensorPointerInfo;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Random descriptors and columnar batches drawn from small pools, so interning is exercised. */
final class RandomDescriptors {

    static final String[] SESSIONS = {"10.0.0.1:7000", "10.0.0.2:7000", "host-a:7100"};
    static final String[] ENTITIES = {"worker-0", "worker-1", "conductor"};
    static final String[] NODES = {null, "vae", "llm", "vit"};
    static final String[] DTYPES = {"bfloat16", "float32", "int64", "uint8"};
    static final String[] PEER_SEGMENTS = {null, null, "mstar-peer-1-0", "mstar-peer-2-3"};

    private final Random r;

    RandomDescriptors(Random r) {
        this.r = r;
    }

    String walk() {
        // Walks come and go (one per loop iteration), so origins must be released as their tensors are.
        return r.nextInt(4) == 0 ? null : "walk-" + r.nextInt(40);
    }

    List<Long> longs(int n, int bound) {
        List<Long> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add((long) r.nextInt(bound) - (r.nextInt(50) == 0 ? bound : 0));
        }
        return out;
    }

    int rank() {
        // High ranks now and then, and rank 0.
        return r.nextInt(10) == 0 ? 7 + r.nextInt(3) : r.nextInt(5);
    }

    TensorPointerInfo info(long uuid) {
        int rank = rank();
        return new TensorPointerInfo(uuid, longs(rank, 4096), longs(rank, 1 << 20), pick(DTYPES),
                r.nextInt(1 << 24), r.nextLong(), r.nextInt(3) == 0 ? r.nextInt(1 << 16) : 0, pick(SESSIONS),
                pick(ENTITIES), 1 + r.nextInt(4), r.nextInt(4), pick(PEER_SEGMENTS), r.nextInt(1 << 20),
                pick(NODES), walk());
    }

    ColumnarTensorInfo columns(long[] uuids) {
        ColumnarTensorInfo c = new ColumnarTensorInfo(pick(SESSIONS), pick(ENTITIES), pick(NODES), walk(),
                1 + r.nextInt(4), r.nextInt(4));
        for (long u : uuids) {
            int rank = rank();
            long[] d = new long[rank + r.nextInt(2)];
            long[] s = new long[d.length];
            for (int k = 0; k < d.length; k++) {
                d[k] = r.nextInt(4096);
                s[k] = r.nextInt(1 << 20);
            }
            c.addRow(u, r.nextLong(), r.nextInt(1 << 24), rank, d, s, c.dtypeIndex(pick(DTYPES)));
        }
        return c;
    }

    <T> T pick(T[] a) {
        return a[r.nextInt(a.length)];
    }
}
