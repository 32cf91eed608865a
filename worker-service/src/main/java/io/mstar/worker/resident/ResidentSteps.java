package io.mstar.worker.resident;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.cuda.CudaDevice;
import io.mstar.tensor.device.cuda.PinnedHostBuffer;

/**
 * A node's captured steps (docs/resident-planning.md#captured-steps): per (walk, padded batch size) two captures,
 * used in turn, so the upload of step N+1 never lands in the buffers step N's replay still reads. A batch is padded up
 * to the smallest capture size that holds it. Running a plan: encode its upload into host staging (pinned on CUDA),
 * one copy to the capture's upload buffer, the replay, a copy of the sampled tokens back, and the planner's advance.
 * Owned by the planner's thread.
 */
public final class ResidentSteps implements AutoCloseable {

    private record Key(String walk, int padded) {
    }

    private final ResidentPlanner planner;
    private final ResidentForward node;
    private final int[] sizes;
    private final Map<Key, CapturedResidentStep[]> steps = new HashMap<>();
    private final Map<Key, Integer> turn = new HashMap<>();
    private final ByteBuffer[] staging = new ByteBuffer[2];
    private final PinnedHostBuffer[] pinned = new PinnedHostBuffer[2];
    private final ResidentStats stats;
    private int stagingTurn;

    /**
     * @param captureSizes the padded batch sizes captured (the {@code resident-capture-sizes} setting); the largest
     *                     must not exceed the planner's rows
     */
    public ResidentSteps(ResidentPlanner planner, ResidentForward node, List<Integer> captureSizes,
            ResidentStats stats) {
        this.planner = planner;
        this.node = node;
        this.stats = stats;
        this.sizes = captureSizes.stream().mapToInt(Integer::intValue).sorted().distinct().toArray();
        if (sizes.length == 0 || sizes[0] < 1 || sizes[sizes.length - 1] > planner.maxRows()) {
            throw new IllegalArgumentException("capture sizes " + captureSizes + " must be within 1.."
                    + planner.maxRows());
        }
        int bytes = Math.toIntExact(planner.uploadBytes());
        Device device = planner.device();
        for (int i = 0; i < 2; i++) {
            if (device instanceof CudaDevice cuda) {
                pinned[i] = cuda.allocatePinned(bytes);
                staging[i] = pinned[i].buffer();
            } else {
                staging[i] = ByteBuffer.allocateDirect(bytes);
            }
            staging[i].order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    /** The smallest capture size that holds {@code batch} rows, or -1 when none does (the batch runs eagerly). */
    public int padded(int batch) {
        int at = Arrays.binarySearch(sizes, batch);
        if (at >= 0) {
            return sizes[at];
        }
        int insert = -at - 1;
        return insert < sizes.length ? sizes[insert] : -1;
    }

    /** Runs {@code plan} on its capture (capturing it first when new); answers each row's sampled token. */
    public int[] run(ResidentPlan plan) {
        CapturedResidentStep step = next(plan.walk(), plan.padded());
        Device device = planner.device();
        ByteBuffer host = staging[stagingTurn];
        stagingTurn ^= 1;
        int[] tokens;
        try {
            long start = System.nanoTime();
            int bytes = ResidentUpload.encode(plan, planner.maxRows(), host);
            device.copyFromHost(host.slice(0, bytes), step.upload(), 0);
            long uploaded = System.nanoTime();
            step.replay();
            ByteBuffer out = host.slice(0, plan.count() * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            device.copyToHost(step.sampled(), 0, out);
            tokens = new int[plan.count()];
            out.asIntBuffer().get(tokens);
            long replayed = System.nanoTime();
            stats.ran(bytes);
            stats.time(ResidentStats.Phase.UPLOAD, uploaded - start);
            stats.time(ResidentStats.Phase.REPLAY, replayed - uploaded);
        } catch (RuntimeException e) {
            planner.abandon(plan);
            throw e;
        }
        long advancing = System.nanoTime();
        planner.advance(plan, tokens);
        stats.time(ResidentStats.Phase.ADVANCE, System.nanoTime() - advancing);
        return tokens;
    }

    private CapturedResidentStep next(String walk, int padded) {
        Key key = new Key(walk, padded);
        CapturedResidentStep[] pair = steps.computeIfAbsent(key, k -> new CapturedResidentStep[2]);
        int slot = turn.merge(key, 1, (a, b) -> a ^ 1) ^ 1;
        if (pair[slot] == null) {
            CapturedResidentStep step = new CapturedResidentStep(planner.device(), walk, padded, slot,
                    planner.uploadBytes());
            try {
                step.capture(() -> planner.record(step, node));
            } catch (RuntimeException e) {
                step.close();
                throw e;
            }
            pair[slot] = step;
            stats.captured();
        }
        return pair[slot];
    }

    /** Replays of every capture so far. */
    public long replays() {
        return steps.values().stream().flatMap(Arrays::stream).filter(s -> s != null)
                .mapToLong(CapturedResidentStep::replays).sum();
    }

    /** Device bytes the captures hold (uploads, sampled tokens, scratch). */
    public long heldBytes() {
        return steps.values().stream().flatMap(Arrays::stream).filter(s -> s != null)
                .mapToLong(CapturedResidentStep::heldBytes).sum();
    }

    /** Captures made so far. */
    public int captures() {
        return (int) steps.values().stream().flatMap(Arrays::stream).filter(s -> s != null).count();
    }

    /** The capture sizes, ascending. */
    public int[] sizes() {
        return sizes.clone();
    }

    @Override
    public void close() {
        steps.values().forEach(pair -> Arrays.stream(pair).filter(s -> s != null).forEach(
                CapturedResidentStep::close));
        steps.clear();
        for (PinnedHostBuffer p : pinned) {
            if (p != null) {
                p.close();
            }
        }
    }
}
