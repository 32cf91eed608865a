package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.mstar.worker.kernel.KvCacheKernel;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kernel.NodeCall;
import io.mstar.worker.kernel.NodeKernel;
import io.mstar.worker.kernel.NodeResult;
import io.mstar.worker.kernel.Tensor;

/**
 * One batch on its way through the device (docs/worker-runtime.md#the-step-pipeline). The engine loop fills what it
 * runs and hands it to the {@link StepExecutor}; the executor fills the outcome and hands it back to the loop. Each
 * side writes only before the hand-off, so nothing is touched by two threads at once.
 */
final class Step {

    /** Where a speculated call takes the loop-back inputs that call {@code fromCall} of the previous step produces. */
    record Continuation(int fromCall, Set<String> loopBacks) {
    }

    final long seq;
    final Scheduler.Key key;
    final NodeKernel kernel;
    /** One per call, in order. */
    final List<ReadyItem> items;
    /** Per call; a continuing call of a speculated step lacks its loop-backs until {@link #threadIn} puts them in. */
    final List<NodeCall> calls;
    /** Per call, a KV node's reservation; null for a stateless node. */
    final List<KvStep> kv;
    /** Per call, the failed result of a call refused pages before the step ran (it is not run), else null. */
    final NodeResult[] refused;
    /** Per call, the loop iteration it runs (-1 outside loops): a continuing call is void once its loop is elsewhere. */
    final int[] iterations;
    /** Per call of a speculated step, its continuation, null for a fresh call; null for a step that is not speculated. */
    final Continuation[] continues;
    /** References the loop took for this step's inputs that the pass could otherwise free while it runs. */
    final List<Long> held = new ArrayList<>();
    /** Outputs of the step before that this one reads but nobody else will: freed once this one completed. */
    final List<NodeResult> freeAfter = new ArrayList<>();

    /** Its batch's {@code spec_seq} when it runs in tensor-parallel lockstep (docs/tensor-parallelism.md), else -1. */
    long tpSeq = -1;

    // The outcome, written by the executor before the hand-back.
    NodeResult[] results;
    RuntimeException error;
    long nanos;
    /** A speculated step that was not run: the step before it threw. */
    boolean voided;
    /** Per call of a speculated step: not run, its request finished or failed in the step before. */
    boolean[] dropped;
    /** The step speculated on this one, as the executor resolved it when this one completed; null when none. */
    Step next;

    Step(long seq, Scheduler.Key key, NodeKernel kernel, List<ReadyItem> items, List<NodeCall> calls, List<KvStep> kv,
            NodeResult[] refused, int[] iterations, Continuation[] continues) {
        this.seq = seq;
        this.key = key;
        this.kernel = kernel;
        this.items = List.copyOf(items);
        this.calls = new ArrayList<>(calls);
        this.kv = kv == null ? null : new ArrayList<>(kv);
        this.refused = refused;
        this.iterations = iterations;
        this.continues = continues;
        this.dropped = new boolean[items.size()];
    }

    boolean speculated() {
        return continues != null;
    }

    /** Whether call {@code i} of this (completed) step goes on in the speculated step that ran after it. */
    boolean continuesInNext(int i) {
        return continuationOf(i) != null;
    }

    /** The continuation of the speculated step's call that goes on from this step's call {@code i}, or null. */
    Continuation continuationOf(int i) {
        if (next == null || next.voided) {
            return null;
        }
        for (int j = 0; j < next.items.size(); j++) {
            Continuation c = next.continues[j];
            if (c != null && c.fromCall() == i && !next.dropped[j]) {
                return c;
            }
        }
        return null;
    }

    /**
     * On the executor, once {@code done} completed: a speculated step takes its continuing calls' loop-backs from
     * {@code done}'s outputs, drops those whose request finished or failed there, and is voided if {@code done} threw.
     */
    void threadIn(Step done) {
        if (done.error != null) {
            voided = true;
            return;
        }
        for (int i = 0; i < calls.size(); i++) {
            Continuation c = continues[i];
            if (c == null) {
                continue;
            }
            NodeResult before = done.results[c.fromCall()];
            if (before == null || before.failed() || before.finish()) {
                dropped[i] = true;
                continue;
            }
            NodeCall call = calls.get(i);
            Map<String, Tensor> inputs = new HashMap<>(call.inputs());
            for (String signal : c.loopBacks()) {
                Tensor produced = before.outputs().get(signal);
                if (produced == null) {
                    dropped[i] = true;
                    break;
                }
                inputs.put(signal, produced);
            }
            if (dropped[i]) {
                continue;
            }
            NodeCall resolved = new NodeCall(call.requestId(), inputs, call.info(), call.position());
            // The positions were reserved before the inputs existed: a call that needs others goes the eager way.
            if (kernel instanceof KvCacheKernel kvKernel && kvKernel.tokensToAppend(resolved) != kv.get(i).count()) {
                dropped[i] = true;
                continue;
            }
            calls.set(i, resolved);
        }
    }
}
