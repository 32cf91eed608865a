package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import io.mstar.graph.NestedLoopIndices;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

/**
 * Builds the {@link StepPipeline}'s steps from ready items (docs/worker-runtime.md#the-step-pipeline): the calls'
 * inputs, their KV positions, the references a step holds; numbers them. Owned by the engine loop.
 */
final class StepBuilder {

    private final KernelCatalog kernels;
    private final Scheduler scheduler;
    private final KvCaches kv;
    private final DataPlane data;
    private final TensorLedger ledger;
    private final PageWaits pageWaits;
    private final Lockstep lockstep;
    private final Predicate<String> holds;
    private long seq;

    /** @param holds whether a running or speculated step holds a request (a lockstep page reservation spares it) */
    StepBuilder(KernelCatalog kernels, Scheduler scheduler, KvCaches kv, DataPlane data, TensorLedger ledger,
            PageWaits pageWaits, Lockstep lockstep, Predicate<String> holds) {
        this.kernels = kernels;
        this.scheduler = scheduler;
        this.kv = kv;
        this.data = data;
        this.ledger = ledger;
        this.pageWaits = pageWaits;
        this.lockstep = lockstep;
        this.holds = holds;
    }

    /**
     * Whether the calls of {@code items} (one node and walk, an eager step's) fit the node's free KV pages as they
     * are, no victim moved: a tensor-parallel follower runs a leader's batch only whole, and chooses no victim.
     */
    boolean fitsFreePages(List<ReadyItem> items) {
        Scheduler.Key key = Scheduler.key(items.get(0));
        if (!(kernels.model(key.model()).kernel(key.node()) instanceof KvCacheKernel kvKernel)) {
            return true;
        }
        List<NodeCall> calls = items.stream().map(this::eagerCall).toList();
        int[] tokens = calls.stream().mapToInt(kvKernel::tokensToAppend).toArray();
        return kv.fitFreePages(key.model(), key.node(), kvKernel, data.device(), calls, tokens);
    }

    /** A call of {@code item} with its node's current inputs. */
    private NodeCall eagerCall(ReadyItem item) {
        Map<String, Tensor> inputs = new HashMap<>();
        item.node().current.forEach((name, uuid) -> {
            if (uuid != WorkerEngine.NO_TENSOR) {
                inputs.put(name, ledger.tensor(uuid));
            }
        });
        return new NodeCall(item.request().requestId, inputs, item.pass().info, item.pass().position(item.node()));
    }

    /**
     * A step of {@code items}: each call's inputs from its node's slots (a continuing call: its retained inputs only,
     * the loop-backs come from the step before), each call's KV positions reserved. In a fresh step a call refused
     * pages fails when the step completes and one that has to wait for pages is left out. A speculated step is built
     * whole or not at all: when one call does not fit the pages its request holds or the free ones
     * ({@link KvCaches#reserveSpeculated}), nothing is speculated, and the next step is built the eager way. A
     * tensor-parallel leader's speculated step, which its followers replay, takes no free page and leaves such a call
     * out instead. The step holds a reference on each retained input it reads. Null when nothing is
     * left to run.
     */
    Step build(List<ReadyItem> candidates, List<Step.Continuation> continuations, List<Integer> iterations) {
        Scheduler.Key key = Scheduler.key(candidates.get(0));
        NodeKernel kernel = kernels.model(key.model()).kernel(key.node());
        boolean speculated = continuations != null;
        List<ReadyItem> items = new ArrayList<>(candidates);
        List<NodeCall> calls = new ArrayList<>(items.size());
        List<List<Long>> held = new ArrayList<>(items.size());
        int[] at = new int[items.size()];
        for (int i = 0; i < items.size(); i++) {
            ReadyItem item = items.get(i);
            Map<String, Tensor> inputs = new HashMap<>();
            List<Long> holds = new ArrayList<>();
            NestedLoopIndices position;
            if (speculated && continuations.get(i) != null) {
                LoopState loop = item.node().loop;
                loop.retained.forEach((edge, uuid) -> {
                    if (edge.destination().equals(item.node().node.name())) {
                        inputs.put(edge.name(), ledger.tensor(uuid));
                        holds.add(uuid); // the loop frees what it retained when it ends, maybe while this step runs
                    }
                });
                at[i] = iterations.get(i);
                position = new NestedLoopIndices(List.of(loop.loop.name()), Map.of(loop.loop.name(), at[i]),
                        item.pass().info.fwdIndex());
            } else {
                calls.add(eagerCall(item));
                at[i] = item.node().loop == null ? -1 : item.node().loop.iteration;
                held.add(holds);
                continue;
            }
            calls.add(new NodeCall(item.request().requestId, inputs, item.pass().info, position));
            held.add(holds);
        }
        NodeResult[] refused = new NodeResult[items.size()];
        boolean[] left = new boolean[items.size()];
        List<KvStep> reserved = null;
        if (kernel instanceof KvCacheKernel kvKernel) {
            int[] tokens = new int[calls.size()];
            for (int i = 0; i < calls.size(); i++) {
                tokens[i] = speculated && continuations.get(i) != null ? kvKernel.tokensPerContinuation()
                        : kvKernel.tokensToAppend(calls.get(i));
            }
            if (speculated) {
                boolean lockstepKey = lockstep.inLockstep(key);
                reserved = kv.reserveSpeculated(key.model(), key.node(), kvKernel, data.device(), calls, tokens,
                        !lockstepKey && !pageWaits.any());
                for (int i = 0; i < left.length; i++) {
                    left[i] = reserved.get(i) == null;
                }
                if (!lockstepKey && reserved.contains(null)) {
                    // all or nothing: a call left out would wait behind a chain of speculated steps that never ends
                    for (KvStep r : reserved) {
                        if (r != null) {
                            kv.rollback(key.model(), key.node(), r);
                        }
                    }
                    List<ReadyItem> fresh = new ArrayList<>();
                    for (int i = 0; i < items.size(); i++) {
                        if (continuations.get(i) == null) {
                            fresh.add(items.get(i));
                        }
                    }
                    scheduler.addFirst(fresh); // their inputs untouched
                    return null;
                }
            } else {
                reserved = kv.reserve(key.model(), key.node(), kvKernel, data.device(), calls, tokens, refused, left,
                        lockstep.busy(key, holds));
            }
        }
        // what is left out waits: a fresh step's calls for pages; a lockstep step's speculated ones the eager way
        List<Step.Continuation> kept = speculated ? new ArrayList<>(continuations) : null;
        for (int i = items.size() - 1; i >= 0; i--) {
            if (!left[i]) {
                continue;
            }
            if (!speculated) {
                pageWaits.add(items.get(i));
            } else if (kept.get(i) == null) {
                scheduler.add(items.get(i)); // fresh: back to the ready set, its inputs untouched
            }
            items.remove(i);
            calls.remove(i);
            held.remove(i);
            reserved.remove(i);
            if (speculated) {
                kept.remove(i);
            }
        }
        if (items.isEmpty()) {
            return null;
        }
        int[] admitted = IntStream.range(0, left.length).filter(i -> !left[i]).toArray();
        NodeResult[] refusedAdmitted = Arrays.stream(admitted).mapToObj(i -> refused[i]).toArray(NodeResult[]::new);
        int[] iterationsAdmitted = Arrays.stream(admitted).map(i -> at[i]).toArray();
        Step.Continuation[] continues = speculated ? kept.toArray(Step.Continuation[]::new) : null;
        items.forEach(pageWaits::admitted);
        Step step = new Step(seq++, key, kernel, items, calls, reserved, refusedAdmitted, iterationsAdmitted, continues);
        held.forEach(list -> list.forEach(uuid -> {
            ledger.hold(uuid, 1);
            step.held.add(uuid);
        }));
        return step;
    }
}
