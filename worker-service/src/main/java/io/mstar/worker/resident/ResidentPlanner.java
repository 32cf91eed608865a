package io.mstar.worker.resident;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.mstar.loop.OwnerThread;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.cuda.CudaDevice;

/**
 * A node's resident planning (docs/resident-planning.md): its resources bind their columns and tables here once
 * ({@link #bind}); then, per step, on the host, {@link #plan} writes whole rows for new or stale requests
 * ({@code resident_row}) and queues every resource's incremental changes ({@code resident_stage}), and after the
 * replay {@link #advance} moves the host mirror by the commit rules ({@code resident_advance}), so the host knows the
 * device's tables without reading them.
 *
 * <p>Slots are leased by the node's KV cache while a request holds device pages (a lease number per hand-out); a
 * row is new when its slot's lease changed and stale when its request ran a step off the tables since (its position
 * is not where the last resident step left it). Slot 0 is the zeroed scratch row padded batch rows point at.
 *
 * <p>Owned by the thread that runs the node's steps: {@link #open} binds it, and every later entry point checks it.
 */
public final class ResidentPlanner implements AutoCloseable {

    /** The narrow table's key. */
    public static final String NARROW = "narrow";
    /** The stream of whole rows written for new or stale requests. */
    public static final String ROWS = "rows";

    private final Device device;
    private final int slots;
    private final int maxRows;
    private final Map<String, ResidentHooks> resources = new LinkedHashMap<>();
    private final List<String> columns = new ArrayList<>();
    private final List<ResidentTable> tables = new ArrayList<>();
    private final Map<String, ResidentPlan.Row> staging = new HashMap<>();
    private long[] leases;
    private int[] nextPosition;
    private ResidentKernels kernels;
    private ResidentCudaKernels cuda;
    private final OwnerThread owner = new OwnerThread("resident planner");
    private boolean open;
    private boolean closed;
    private long newRows;
    private long staleRows;

    /**
     * @param slots   requests the tables hold at once (rows 1..slots; row 0 is scratch)
     * @param maxRows rows of the largest step (the largest capture size): the upload's slot area
     */
    public ResidentPlanner(Device device, int slots, int maxRows) {
        if (slots < 1 || maxRows < 1) {
            throw new IllegalArgumentException("a planner needs 1+ slots and rows, got " + slots + ", " + maxRows);
        }
        this.device = device;
        this.slots = slots;
        this.maxRows = maxRows;
        tables.add(null); // the narrow table, made at open() once every column is declared
    }

    /** Binds {@code resource} under {@code key}: it declares its columns and tables ({@code bind_resident}). */
    public void bind(String key, ResidentHooks resource) {
        if (open) {
            throw new IllegalStateException("bind before open()");
        }
        if (resources.putIfAbsent(key, resource) != null || NARROW.equals(key) || ROWS.equals(key)) {
            throw new IllegalArgumentException("resource key '" + key + "' is taken");
        }
        resource.bindResident(this, key);
    }

    /** Declares a narrow column (an int32 cell of every row); answers its index. At bind only. */
    public int column(String key, String name) {
        if (open) {
            throw new IllegalStateException("columns are declared at bind");
        }
        columns.add(key + "." + name);
        return columns.size() - 1;
    }

    /** Declares a wide table of {@code width} cells per row, owned by resource {@code key}. At bind only. */
    public ResidentTable table(String key, String name, int width) {
        if (open) {
            throw new IllegalStateException("tables are declared at bind");
        }
        ResidentTable t = new ResidentTable(tables.size(), key, name, slots + 1, width);
        tables.add(t);
        return t;
    }

    /** The first reason a bound resource gives for not running on tables, or empty. */
    public Optional<String> refusal() {
        for (ResidentHooks r : resources.values()) {
            Optional<String> why = r.residentRefusal();
            if (why.isPresent()) {
                return why;
            }
        }
        return Optional.empty();
    }

    /** Allocates every table (zeroed) on the device; the calling thread owns the planner from now on. */
    public void open() {
        if (open) {
            throw new IllegalStateException("opened already");
        }
        if (columns.isEmpty()) {
            throw new IllegalStateException("no resource declared a column");
        }
        owner.check();
        open = true;
        tables.set(0, new ResidentTable(0, NARROW, NARROW, slots + 1, columns.size()));
        leases = new long[slots + 1];
        nextPosition = new int[slots + 1];
        try {
            for (ResidentTable t : tables) {
                t.open(device);
            }
            if (device instanceof CudaDevice cudaDevice) {
                cuda = ResidentCudaKernels.load(cudaDevice, maxRows, tables);
                kernels = cuda;
            } else {
                kernels = new ResidentHostKernels(device, tables, maxRows);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Plans a step of {@code rows} (in batch order) padded to {@code padded}: whole rows for new or stale requests,
     * then each resource's staged changes, all applied to the host mirror and queued for the upload.
     */
    public ResidentPlan plan(String walk, List<ResidentPlan.Row> rows, int padded) {
        checkOwner();
        ResidentWrites writes = new ResidentWrites(this);
        boolean[] fresh = new boolean[rows.size()];
        ResidentPlan plan = new ResidentPlan(walk, rows, padded, writes, fresh);
        staging.clear();
        for (ResidentPlan.Row row : rows) {
            if (staging.put(row.rid(), row) != null) {
                throw new IllegalArgumentException("request " + row.rid() + " twice in one step");
            }
            if (row.slot() > slots) {
                throw new IllegalArgumentException("slot " + row.slot() + " of " + row.rid() + " is over " + slots);
            }
        }
        try {
            for (int i = 0; i < rows.size(); i++) {
                ResidentPlan.Row row = rows.get(i);
                boolean isNew = leases[row.slot()] != row.lease();
                if (isNew || nextPosition[row.slot()] != row.kv().firstPosition()) {
                    if (isNew) {
                        newRows++;
                    } else {
                        staleRows++;
                    }
                    int[] cells = new int[columns.size()];
                    resources.values().forEach(r -> r.residentRow(row.rid(), row.slot(), cells, writes));
                    writes.row(ROWS, row.slot(), cells);
                    leases[row.slot()] = row.lease();
                    fresh[i] = true;
                }
            }
            resources.values().forEach(r -> r.residentStage(plan));
        } catch (RuntimeException e) {
            // what was queued is in the mirror but will never reach the device: make those rows new next time
            rows.forEach(r -> leases[r.slot()] = 0);
            throw e;
        }
        return plan;
    }

    /** The row of {@code rid} in the step being planned ({@code resident_row} and {@code resident_stage} read it). */
    public ResidentPlan.Row row(String rid) {
        ResidentPlan.Row row = staging.get(rid);
        if (row == null) {
            throw new IllegalArgumentException("request " + rid + " is not in the step being planned");
        }
        return row;
    }

    /** After {@code plan}'s replay: every resource advances its mirror by its commit rule. */
    void advance(ResidentPlan plan, int[] sampled) {
        checkOwner();
        plan.ran(sampled);
        resources.values().forEach(r -> r.residentAdvance(plan));
        for (ResidentPlan.Row row : plan.rows()) {
            nextPosition[row.slot()] = row.kv().sequenceLength();
        }
    }

    /** Forgets {@code plan}'s rows: its replay did not run, so the device never got its writes. */
    void abandon(ResidentPlan plan) {
        checkOwner();
        plan.rows().forEach(r -> leases[r.slot()] = 0);
    }

    /**
     * Records a whole step into {@code step}: the upload's runs applied to the tables, every resource's gathers,
     * {@code node}'s forward, every resource's commits.
     */
    void record(CapturedResidentStep step, ResidentForward node) {
        checkOwner();
        recordApply(step);
        resources.values().forEach(r -> r.residentGather(step));
        node.residentForward(step);
        resources.values().forEach(r -> r.residentCommit(step));
    }

    private void recordApply(CapturedResidentStep step) {
        step.record(NARROW, () -> kernels.apply(step.upload()));
    }

    private void checkOwner() {
        if (!open || closed) {
            throw new IllegalStateException("planner is " + (closed ? "closed" : "not open"));
        }
        owner.check();
    }

    public Device device() {
        return device;
    }

    /** The table operations the resources' captured work is made of (after open). */
    public ResidentKernels kernels() {
        return kernels;
    }

    /** The CUDA kernels (the sampler's draw among them); null on a host device. */
    public ResidentCudaKernels cuda() {
        return cuda;
    }

    /** The slots of a host step's real rows, read off its upload (host ops of a step). */
    public int[] rowSlots(DeviceBuffer upload) {
        return ResidentHostKernels.slots(new DeviceInts(device), upload);
    }

    public int slots() {
        return slots;
    }

    /** Rows written whole because their slot's lease was new, since open. */
    public long newRows() {
        return newRows;
    }

    /** Rows written whole because their request ran off the tables since its last resident step. */
    public long staleRows() {
        return staleRows;
    }

    /** Rows of the largest step. */
    public int maxRows() {
        return maxRows;
    }

    /** Upload bytes a step needs at most: every row whole, every wide table's row whole, a run each. */
    long uploadBytes() {
        int wide = 0;
        for (int i = 1; i < tables.size(); i++) {
            wide += tables.get(i).width();
        }
        int perRow = columns.size() + wide;
        // runs per row: the whole row, one per wide table, and one per narrow cell staged on its own
        int runsPerRow = 1 + (tables.size() - 1) + columns.size();
        return (long) Integer.BYTES * ResidentUpload.capacity(maxRows, maxRows * runsPerRow,
                Math.multiplyExact(maxRows, perRow + columns.size()));
    }

    /** Narrow columns per row. */
    public int columns() {
        return columns.size();
    }

    /** Column names as {@code key.name}, by index. */
    public List<String> columnNames() {
        return List.copyOf(columns);
    }

    /** The narrow table (after open). */
    public ResidentTable narrow() {
        ResidentTable t = tables.get(0);
        if (t == null) {
            throw new IllegalStateException("the narrow table is made at open()");
        }
        return t;
    }

    /** Every table, narrow first (after open). */
    public List<ResidentTable> tables() {
        return List.copyOf(tables);
    }

    /** Device bytes the tables take (on CUDA with the tables' address list the apply kernel reads). */
    public long tableBytes() {
        long bytes = tables.stream().filter(t -> t != null).mapToLong(t -> (long) t.rows() * t.width() * Integer.BYTES)
                .sum();
        return cuda == null ? bytes : bytes + (long) tables.size() * Long.BYTES;
    }

    /** Frees the tables; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ResidentTable t : tables) {
            if (t != null) {
                t.close(device);
            }
        }
        if (kernels != null) {
            kernels.close();
            kernels = null;
        }
    }
}
