package io.mstar.worker.kernel.onnx;

/**
 * The contiguous runs one request's tensor ({@code part}) shares with a batch tensor ({@code whole}) that holds it
 * from row {@code row0} of axis 0 on, padded past the request's end along other axes: what copies a request into a
 * padded batch and its outputs back out. Both are row-major; offsets and lengths count elements.
 */
final class PaddedBlocks {

    /** One run: {@code length} elements at {@code partOffset} in the request's tensor, {@code wholeOffset} in the batch's. */
    interface Block {
        void run(long partOffset, long wholeOffset, long length);
    }

    private PaddedBlocks() {
    }

    /**
     * Each run of {@code part} in {@code whole}, in order; {@code part} must fit ({@code row0 + part[0] <= whole[0]},
     * {@code part[a] <= whole[a]} on the other axes). A scalar, or a tensor that is the whole, is one run.
     */
    static void forEach(long[] part, long[] whole, long row0, Block block) {
        long elements = count(part);
        if (elements == 0) {
            return;
        }
        if (part.length == 0 || (row0 == 0 && java.util.Arrays.equals(part, whole))) {
            block.run(0, 0, elements);
            return;
        }
        // the innermost padded axis: inside it the two tensors agree, so one run covers it and everything within
        int last = 0;
        for (int a = 1; a < part.length; a++) {
            if (part[a] != whole[a]) {
                last = a;
            }
        }
        long[] partStride = strides(part);
        long[] wholeStride = strides(whole);
        long length = part[last] * partStride[last];
        long[] index = new long[last];
        while (true) {
            long partOffset = 0;
            long wholeOffset = row0 * wholeStride[0];
            for (int a = 0; a < last; a++) {
                partOffset += index[a] * partStride[a];
                wholeOffset += index[a] * wholeStride[a];
            }
            block.run(partOffset, wholeOffset, length);
            int a = last - 1;
            while (a >= 0 && ++index[a] == part[a]) {
                index[a] = 0;
                a--;
            }
            if (a < 0) {
                return;
            }
        }
    }

    static long count(long[] dims) {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }

    private static long[] strides(long[] dims) {
        long[] stride = new long[dims.length];
        long step = 1;
        for (int a = dims.length - 1; a >= 0; a--) {
            stride[a] = step;
            step *= dims[a];
        }
        return stride;
    }
}
