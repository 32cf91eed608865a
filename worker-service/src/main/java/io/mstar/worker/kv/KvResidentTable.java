package io.mstar.worker.kv;

import java.util.Arrays;

import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.resident.CapturedResidentStep;
import io.mstar.worker.resident.ResidentHooks;
import io.mstar.worker.resident.ResidentPlan;
import io.mstar.worker.resident.ResidentPlanner;
import io.mstar.worker.resident.ResidentTable;
import io.mstar.worker.resident.ResidentWrites;

/**
 * The KV cache's share of a node's resident tables (docs/resident-planning.md#the-kv-cache): per request, narrow, its
 * sequence length and last-page fill, and a wide page table whose row holds its pages in position order, uploaded as
 * runs of used cells (a row whole when new, a new page when a step crosses into one). The captured step's attention
 * reads pages straight off the table ({@link CapturedResidentStep#readsTables}); the commit advances both cells by one
 * position.
 */
public final class KvResidentTable implements ResidentHooks {

    private final KvCacheLayout layout;
    private final int width;
    private ResidentPlanner planner;
    private String key;
    private int seqLen;
    private int lastPageFill;
    private ResidentTable pageTable;
    /** Per slot, the page-table cells its row holds now (mirror). */
    private int[] pagesHeld;

    /** @param width pages one row of the table holds: a longer sequence does not run on tables */
    public KvResidentTable(KvCacheLayout layout, int width) {
        this.layout = layout;
        this.width = width;
    }

    @Override
    public void bindResident(ResidentPlanner planner, String key) {
        this.planner = planner;
        this.key = key;
        seqLen = planner.column(key, "seq_len");
        lastPageFill = planner.column(key, "last_page_fill");
        pageTable = planner.table(key, "page_table", width);
        pagesHeld = new int[planner.slots() + 1];
    }

    /** Positions used in the last page of a sequence of {@code length} positions (0 for none). */
    public int fill(int length) {
        return length == 0 ? 0 : (length - 1) % layout.pageSize() + 1;
    }

    /** Whether {@code kv}'s pages fit a row of the page table. */
    public boolean fits(KvStep kv) {
        return kv.pages().length <= width;
    }

    @Override
    public void residentRow(String rid, int slot, int[] row, ResidentWrites writes) {
        KvStep kv = planner.row(rid).kv();
        row[seqLen] = kv.firstPosition();
        row[lastPageFill] = fill(kv.firstPosition());
        writes.run(key, pageTable, slot, 0, kv.pages());
        pagesHeld[slot] = kv.pages().length;
    }

    @Override
    public void residentStage(ResidentPlan plan) {
        for (int i = 0; i < plan.count(); i++) {
            ResidentPlan.Row row = plan.rows().get(i);
            int[] pages = row.kv().pages();
            int held = pagesHeld[row.slot()];
            if (!plan.fresh(i) && pages.length > held) {
                plan.writes().run(key, pageTable, row.slot(), held, Arrays.copyOfRange(pages, held, pages.length));
            }
            pagesHeld[row.slot()] = pages.length;
        }
    }

    @Override
    public void residentGather(CapturedResidentStep step) {
        step.readsTables(true);
    }

    @Override
    public void residentCommit(CapturedResidentStep step) {
        step.record(key, () -> {
            planner.kernels().add(step.upload(), planner.narrow(), seqLen, 1);
            planner.kernels().fill(step.upload(), planner.narrow(), lastPageFill, layout.pageSize());
        });
    }

    @Override
    public void residentAdvance(ResidentPlan plan) {
        ResidentTable narrow = planner.narrow();
        for (ResidentPlan.Row row : plan.rows()) {
            narrow.set(row.slot(), seqLen, narrow.get(row.slot(), seqLen) + 1);
            narrow.set(row.slot(), lastPageFill, narrow.get(row.slot(), lastPageFill) % layout.pageSize() + 1);
        }
    }

    /** The narrow column of sequence lengths (the position a row's next token is fed at). */
    public int seqLenColumn() {
        return seqLen;
    }

    public ResidentTable pageTable() {
        return pageTable;
    }

    public KvCacheLayout layout() {
        return layout;
    }
}
