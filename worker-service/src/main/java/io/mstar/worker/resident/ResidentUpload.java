package io.mstar.worker.resident;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The one buffer a step uploads ahead of its replay (docs/resident-planning.md#the-upload), int32 little-endian:
 * {@code [count, padded, runs]}, then {@code maxRows} slots (the batch's, then 0 for padding), then per run
 * {@code [table, offset, length, valuesAt]}, then the runs' values. The captured step's first kernel applies the runs
 * to the tables; its gathers read the slots. Fixed at capture: the graph addresses it, so its capacity never changes.
 */
final class ResidentUpload {

    static final int COUNT = 0;
    static final int PADDED = 1;
    static final int RUNS = 2;
    static final int SLOTS = 3;
    static final int RUN_INTS = 4;

    private ResidentUpload() {
    }

    /** Ints a plan of {@code maxRows} rows writing at most {@code maxRuns} runs of {@code maxValues} cells needs. */
    static int capacity(int maxRows, int maxRuns, int maxValues) {
        return Math.addExact(SLOTS + maxRows, Math.addExact(Math.multiplyExact(RUN_INTS, maxRuns), maxValues));
    }

    /** Writes {@code plan} into {@code out} (position 0 on); answers the bytes used. */
    static int encode(ResidentPlan plan, int maxRows, ByteBuffer out) {
        ByteBuffer b = out.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        List<ResidentWrites.Run> runs = plan.writes().all();
        int valuesAt = SLOTS + maxRows + RUN_INTS * runs.size();
        int ints = valuesAt + plan.writes().cells();
        if ((long) ints * Integer.BYTES > b.capacity()) {
            throw new IllegalStateException("a plan of " + runs.size() + " runs, " + plan.writes().cells()
                    + " cells, is over the step's upload of " + b.capacity() / Integer.BYTES + " ints");
        }
        b.putInt(COUNT * 4, plan.count());
        b.putInt(PADDED * 4, plan.padded());
        b.putInt(RUNS * 4, runs.size());
        int[] slots = plan.slots();
        for (int i = 0; i < maxRows; i++) {
            b.putInt((SLOTS + i) * 4, i < slots.length ? slots[i] : 0);
        }
        int record = SLOTS + maxRows;
        for (ResidentWrites.Run run : runs) {
            b.putInt(record * 4, run.table());
            b.putInt((record + 1) * 4, run.offset());
            b.putInt((record + 2) * 4, run.values().length);
            b.putInt((record + 3) * 4, valuesAt);
            for (int v : run.values()) {
                b.putInt(valuesAt++ * 4, v);
            }
            record += RUN_INTS;
        }
        return ints * Integer.BYTES;
    }
}
