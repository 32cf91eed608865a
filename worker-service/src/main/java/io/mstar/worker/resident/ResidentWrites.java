package io.mstar.worker.resident;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cells one step changes in its node's resident tables before the replay, by resource key: narrow cells
 * ({@link #cell}), whole narrow rows of new or stale requests ({@link #row}), and runs of a wide table's used cells
 * ({@link #run}). The planner applies them to the host mirror as they are queued and uploads them all at once ahead
 * of the replay, so the mirror and the device agree when the step starts.
 */
public final class ResidentWrites {

    /** {@code values} into table {@code table} from flat cell {@code offset} on. */
    public record Run(int table, int offset, int[] values) {
    }

    private final ResidentPlanner planner;
    private final Map<String, List<Run>> streams = new LinkedHashMap<>();
    private int runs;
    private int cells;

    ResidentWrites(ResidentPlanner planner) {
        this.planner = planner;
    }

    /** One narrow cell of {@code slot}'s row. */
    public void cell(String key, int slot, int column, int value) {
        add(key, planner.narrow(), slot, column, new int[] {value});
    }

    /** {@code slot}'s whole narrow row (every resource's columns, as their {@code resident_row} set them). */
    public void row(String key, int slot, int[] row) {
        if (row.length != planner.columns()) {
            throw new IllegalArgumentException("a row of " + row.length + " cells, the planner packs "
                    + planner.columns());
        }
        add(key, planner.narrow(), slot, 0, row.clone());
    }

    /** Cells {@code [firstCell, firstCell + values.length)} of {@code slot}'s row of a wide table. */
    public void run(String key, ResidentTable table, int slot, int firstCell, int[] values) {
        if (table.index() == 0) {
            throw new IllegalArgumentException("runs go to wide tables; narrow cells are cell() or row()");
        }
        if (values.length > 0) {
            table.offset(slot, firstCell + values.length - 1); // range check
            add(key, table, slot, firstCell, values.clone());
        }
    }

    private void add(String key, ResidentTable table, int slot, int first, int[] values) {
        if (slot == 0) {
            throw new IllegalArgumentException("slot 0 is the scratch row; nothing writes it");
        }
        Run run = new Run(table.index(), table.offset(slot, first), values);
        table.apply(run.offset(), values);
        streams.computeIfAbsent(key, k -> new ArrayList<>()).add(run);
        runs++;
        cells += values.length;
    }

    /** The queued runs per resource key, in the order they were queued (later ones win). */
    public Map<String, List<Run>> streams() {
        Map<String, List<Run>> view = new LinkedHashMap<>();
        streams.forEach((k, v) -> view.put(k, Collections.unmodifiableList(v)));
        return Collections.unmodifiableMap(view);
    }

    public int runs() {
        return runs;
    }

    public int cells() {
        return cells;
    }

    /** Every run in upload order: the streams one after the other. */
    List<Run> all() {
        List<Run> all = new ArrayList<>(runs);
        streams.values().forEach(all::addAll);
        return all;
    }
}
