package io.mstar.worker.kernel.tts.cuda;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import io.mstar.worker.kernel.tts.LmJob;
import io.mstar.worker.kernel.tts.ToyTtsWeights;

/**
 * A batch's jobs as the CUDA kernels read them, little-endian int32: {@value #JOB_INTS} ints per job (token offset,
 * token count, first position, page-table offset, logits row or -1), then every job's tokens, then every job's page
 * table. A job's token offset is also its first row of the batch's per-token rows.
 *
 * @param host        the table's bytes, to copy to the device
 * @param tokenAt     where the tokens start, in ints
 * @param pageAt      where the page tables start, in ints
 * @param tokens      the batch's fed tokens (rows)
 * @param logitRows   the jobs that want logits
 */
record LmJobTable(ByteBuffer host, int tokenAt, int pageAt, int tokens, int logitRows) {

    static final int JOB_INTS = 5;

    /**
     * @throws IllegalArgumentException when a job attends over more than {@code maxPositions}
     */
    static LmJobTable of(List<LmJob> jobs, int maxPositions) {
        int tokens = 0;
        int pageEntries = 0;
        for (LmJob job : jobs) {
            if (job.sequenceLength() > maxPositions) {
                throw new IllegalArgumentException("a sequence of " + job.sequenceLength() + " positions is over the "
                        + maxPositions + " the CUDA kernel attends over");
            }
            tokens += job.tokens().length;
            pageEntries += job.pages().length;
        }
        int tokenAt = jobs.size() * JOB_INTS;
        int pageAt = tokenAt + tokens;
        ByteBuffer host = ByteBuffer.allocateDirect(Math.max(1, (pageAt + pageEntries) * 4))
                .order(ByteOrder.LITTLE_ENDIAN);
        int row = 0;
        int t = tokenAt;
        int p = pageAt;
        for (int j = 0; j < jobs.size(); j++) {
            LmJob job = jobs.get(j);
            host.putInt((j * JOB_INTS) * 4, t - tokenAt);
            host.putInt((j * JOB_INTS + 1) * 4, job.tokens().length);
            host.putInt((j * JOB_INTS + 2) * 4, job.firstPosition());
            host.putInt((j * JOB_INTS + 3) * 4, p - pageAt);
            host.putInt((j * JOB_INTS + 4) * 4, job.wantLogits() ? row++ : -1);
            for (int id : job.tokens()) {
                host.putInt(t++ * 4, id);
            }
            for (int page : job.pages()) {
                host.putInt(p++ * 4, page);
            }
        }
        host.limit((pageAt + pageEntries) * 4);
        return new LmJobTable(host, tokenAt, pageAt, tokens, row);
    }

    /** The table's size in bytes. */
    long bytes() {
        return host.limit();
    }

    /** Logits read back from the device ({@code logitRows} rows of the vocabulary), one array per job that wants them. */
    static float[][] logits(List<LmJob> jobs, ByteBuffer rows) {
        float[][] logits = new float[jobs.size()][];
        int row = 0;
        for (int j = 0; j < jobs.size(); j++) {
            if (jobs.get(j).wantLogits()) {
                float[] r = new float[ToyTtsWeights.VOCAB];
                rows.asFloatBuffer().get(row * ToyTtsWeights.VOCAB, r);
                logits[j] = r;
                row++;
            }
        }
        return logits;
    }

    /** {@code bytes} rounded up to the device allocator's 256-byte alignment. */
    static long align(long bytes) {
        return (bytes + 255) / 256 * 256;
    }
}
