package io.mstar.worker.resident;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.HostDevice;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kv.KvCacheLayout;

/**
 * Each hook's contract on a host device, with a resource that counts its calls: rows are written whole only for new
 * and stale requests, staging touches host state only, gathers and commits are recorded at capture only while replays
 * repeat them, the advance keeps the mirror equal to the device, and the planner's own rules (slot 0, one owner
 * thread, a fixed upload) hold.
 */
class ResidentPlannerTests {

    static final String KEY = "counter";

    /** A resource with one narrow cell per row that each step's commit raises by one. */
    static final class CountingResource implements ResidentHooks {
        ResidentPlanner planner;
        int column;
        int rows;
        int stages;
        int gathers;
        int commits;
        int advances;
        int gatherRuns;
        int stageWritesPerRow;

        @Override
        public void bindResident(ResidentPlanner planner, String key) {
            this.planner = planner;
            column = planner.column(key, "count");
        }

        @Override
        public void residentRow(String rid, int slot, int[] row, ResidentWrites writes) {
            rows++;
            row[column] = planner.row(rid).kv().firstPosition();
        }

        @Override
        public void residentStage(ResidentPlan plan) {
            stages++;
            for (int i = 0; i < plan.count() && stageWritesPerRow > 0; i++) {
                ResidentPlan.Row row = plan.rows().get(i);
                plan.writes().cell(KEY, row.slot(), column, planner.narrow().get(row.slot(), column) + 100);
            }
        }

        @Override
        public void residentGather(CapturedResidentStep step) {
            gathers++;
            step.record(KEY, () -> gatherRuns++);
        }

        @Override
        public void residentCommit(CapturedResidentStep step) {
            commits++;
            step.record(KEY, () -> planner.kernels().add(step.upload(), planner.narrow(), column, 1));
        }

        @Override
        public void residentAdvance(ResidentPlan plan) {
            advances++;
            for (ResidentPlan.Row row : plan.rows()) {
                planner.narrow().set(row.slot(), column, planner.narrow().get(row.slot(), column) + 1);
            }
        }
    }

    /** The node's forward: each row "samples" its slot times ten plus its counter. */
    static final class SlotForward implements ResidentForward {
        final CountingResource counter;
        int forwards;

        SlotForward(CountingResource counter) {
            this.counter = counter;
        }

        @Override
        public void residentForward(CapturedResidentStep step) {
            forwards++;
            DeviceInts ints = new DeviceInts(step.device());
            step.record("node", () -> {
                int[] slots = counter.planner.rowSlots(step.upload());
                int[] out = new int[slots.length];
                for (int j = 0; j < slots.length; j++) {
                    ResidentTable narrow = counter.planner.narrow();
                    out[j] = slots[j] * 10 + ints.read(narrow.buffer(), narrow.offset(slots[j], counter.column), 1)[0];
                }
                ints.write(step.sampled(), 0, out);
            });
        }
    }

    HostDevice device;
    ResidentPlanner planner;
    CountingResource counter;
    SlotForward node;
    ResidentSteps steps;
    ResidentSlots slots;
    final KvCacheLayout layout = new KvCacheLayout(4, 16, 8);

    @BeforeEach
    void open() {
        device = new HostDevice(HostDevice.NAME, 16 << 20);
        planner = new ResidentPlanner(device, 8, 4);
        counter = new CountingResource();
        node = new SlotForward(counter);
        planner.bind(KEY, counter);
        planner.open();
        steps = new ResidentSteps(planner, node, List.of(1, 2, 4), new ResidentStats(null, "m", "n"));
        slots = new ResidentSlots(8);
    }

    @AfterEach
    void close() {
        steps.close();
        planner.close();
        assertThat(device.stats().bytesInUse()).as("tables and captures freed").isZero();
        device.close();
    }

    private ResidentPlan.Row row(String rid, int position) {
        ResidentSlots.Lease lease = slots.lease(rid);
        KvStep kv = new KvStep(rid, null, layout, new int[] {0}, position, 1, SamplingConfig.DEFAULT, 0L, null, lease);
        return new ResidentPlan.Row(rid, lease.slot(), lease.number(), kv, new int[] {0, 0});
    }

    private void assertMirrorIsDevice() {
        for (ResidentTable t : planner.tables()) {
            assertThat(t.readDevice(device)).as(t.name()).isEqualTo(t.mirror());
        }
    }

    @Test
    void rowsAreWrittenWholeOnlyWhenNewOrStale() {
        steps.run(planner.plan("w", List.of(row("a", 5), row("b", 9)), 2));
        assertThat(counter.rows).as("both new").isEqualTo(2);
        steps.run(planner.plan("w", List.of(row("a", 6), row("b", 10)), 2));
        assertThat(counter.rows).as("both advanced by the last step: staged, not rewritten").isEqualTo(2);
        steps.run(planner.plan("w", List.of(row("a", 9)), 1));
        assertThat(counter.rows).as("a ran elsewhere in between (stale)").isEqualTo(3);
        slots.release("b");
        ResidentPlan.Row c = row("c", 0);
        assertThat(c.slot()).as("b's slot, reused first").isEqualTo(slots.lease("c").slot());
        steps.run(planner.plan("w", List.of(c), 1));
        assertThat(counter.rows).as("a new lease on b's old slot").isEqualTo(4);
        assertThat(planner.newRows()).isEqualTo(3);
        assertThat(planner.staleRows()).isEqualTo(1);
        assertMirrorIsDevice();
    }

    @Test
    void stagingChangesTheMirrorButNotTheDeviceUntilTheUploadRuns() {
        steps.run(planner.plan("w", List.of(row("a", 1)), 1));
        int[] deviceBefore = planner.narrow().readDevice(device);
        counter.stageWritesPerRow = 1;
        ResidentPlan plan = planner.plan("w", List.of(row("a", 2)), 1);
        assertThat(plan.writes().streams()).containsKey(KEY);
        assertThat(planner.narrow().readDevice(device)).as("stage is host work only").isEqualTo(deviceBefore);
        assertThat(planner.narrow().mirror()).isNotEqualTo(deviceBefore);
        int[] sampled = steps.run(plan);
        assertMirrorIsDevice();
        int slot = plan.rows().get(0).slot();
        assertThat(sampled).containsExactly(slot * 10 + 1 + 1 + 100);
    }

    @Test
    void gatherAndCommitAreRecordedAtCaptureOnlyAndReplaysRepeatThem() {
        for (int i = 0; i < 7; i++) {
            steps.run(planner.plan("w", List.of(row("a", i)), 1));
            assertMirrorIsDevice();
        }
        assertThat(counter.gathers).as("two captures of (w, 1)").isEqualTo(2);
        assertThat(counter.commits).isEqualTo(2);
        assertThat(node.forwards).isEqualTo(2);
        assertThat(counter.gatherRuns).as("every replay runs the recorded gather").isEqualTo(7);
        assertThat(steps.replays()).isEqualTo(7);
        assertThat(steps.captures()).isEqualTo(2);
        assertThat(counter.advances).isEqualTo(7);
        assertThat(counter.stages).isEqualTo(7);
        steps.run(planner.plan("w", List.of(row("a", 7), row("b", 0), row("c", 0)), 4));
        assertThat(counter.gathers).as("a new padded size is a new capture").isEqualTo(3);
        assertMirrorIsDevice();
        assertThat(planner.narrow().get(0, counter.column)).as("padding rows never write slot 0").isZero();
    }

    @Test
    void aBatchIsPaddedToTheSmallestCaptureThatHoldsItAndNoneHoldsALargerOne() {
        assertThat(steps.padded(1)).isEqualTo(1);
        assertThat(steps.padded(3)).isEqualTo(4);
        assertThat(steps.padded(4)).isEqualTo(4);
        assertThat(steps.padded(5)).isEqualTo(-1);
        int[] sampled = steps.run(planner.plan("w", List.of(row("a", 0), row("b", 0), row("c", 0)), 4));
        assertThat(sampled).hasSize(3);
    }

    @Test
    void nothingWritesTheScratchRowAndRequestsAppearOncePerStep() {
        ResidentWrites writes = planner.plan("w", List.of(row("a", 0)), 1).writes();
        assertThatThrownBy(() -> writes.cell(KEY, 0, counter.column, 1)).hasMessageContaining("slot 0");
        assertThatThrownBy(() -> planner.plan("w", List.of(row("a", 0), row("a", 0)), 2))
                .hasMessageContaining("twice");
        assertThatThrownBy(() -> planner.column(KEY, "late")).hasMessageContaining("bind");
    }

    @Test
    void onlyTheOwnerThreadPlans() throws Exception {
        planner.plan("w", List.of(row("a", 0)), 1);
        CompletableFuture<Object> other = CompletableFuture.supplyAsync(() -> planner.plan("w",
                List.of(row("b", 0)), 1));
        assertThatThrownBy(other::get).isInstanceOf(ExecutionException.class)
                .hasRootCauseInstanceOf(IllegalStateException.class).rootCause().hasMessageContaining("owned by");
    }

    @Test
    void slotsAreLeasedLifoWithANewNumberPerHandOutAndRunOut() {
        ResidentSlots two = new ResidentSlots(2);
        ResidentSlots.Lease a = two.lease("a");
        ResidentSlots.Lease b = two.lease("b");
        assertThat(List.of(a.slot(), b.slot())).containsExactly(1, 2);
        assertThat(two.lease("a")).as("the same lease while held").isEqualTo(a);
        assertThat(two.lease("c")).as("none free").isNull();
        two.release("a");
        ResidentSlots.Lease c = two.lease("c");
        assertThat(c.slot()).isEqualTo(1);
        assertThat(c.number()).isGreaterThan(b.number());
        assertThat(two.leased()).isEqualTo(2);
        List<Long> numbers = new ArrayList<>(List.of(a.number(), b.number(), c.number()));
        assertThat(numbers).doesNotHaveDuplicates();
    }
}
