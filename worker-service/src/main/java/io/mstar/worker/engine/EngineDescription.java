package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where every request stands on this worker, for an operator or a test asking why one does not move
 * ({@code GET /actuator/engine}, docs/operability.md#a-request-that-does-not-move). Built on the engine loop when
 * asked, never published: it walks every request.
 *
 * @param steps     the step running on the device and the one speculated on it, in that order
 * @param ready     ready nodes per {@code model/node/walk} waiting for a batch
 * @param pageWaits calls waiting for KV pages
 * @param requests  every request on this worker, in arrival order
 */
public record EngineDescription(List<StepView> steps, Map<String, Integer> ready, int pageWaits,
        List<RequestView> requests) {

    /** A step on its way through the device. */
    public record StepView(long seq, String node, String walk, boolean speculated, List<String> requests) {

        static StepView of(Step step) {
            return new StepView(step.seq, step.key.node(), step.key.walk(), step.speculated(),
                    step.items.stream().map(item -> item.request().requestId).toList());
        }
    }

    /** A request: its phase, whether a step holds it, each partition. */
    public record RequestView(String requestId, String model, String phase, String end, int readsInFlight,
            boolean inStep, List<PartitionView> partitions) {
    }

    /**
     * A partition: its pass (null walk between passes), signals waiting for the next pass, its nodes, the streams it
     * consumes.
     */
    public record PartitionView(String name, String walk, long fwdIndex, boolean passComplete, int pendingSignals,
            List<NodeView> nodes, List<StreamView> streams) {
    }

    /** A node of the pass: whether it waits for inputs, is queued or in a step, or ran; its loop's progress. */
    public record NodeView(String name, List<String> inputs, boolean queued, boolean ran, String loop, int iteration,
            int iterations, boolean loopDone) {
    }

    /**
     * A consumed stream: tokens registered, still being read and delivered; tensors held; chunks cut; whether its
     * producer is done and the final chunk was cut.
     */
    public record StreamView(String edge, long registered, int unlanded, long consumed, int held, int chunksCut,
            boolean producerDone, boolean finished) {
    }

    static RequestView describe(WorkerRequest request, boolean inStep) {
        List<PartitionView> partitions = new ArrayList<>();
        request.partitions.values().forEach(partition -> partitions.add(describe(partition)));
        return new RequestView(request.requestId, request.model, request.phase.name().toLowerCase(Locale.ROOT),
                request.end == null ? null : request.end.value(), request.readsInFlight, inStep, partitions);
    }

    private static PartitionView describe(PartitionState partition) {
        PartitionPass pass = partition.pass;
        List<NodeView> nodes = new ArrayList<>();
        if (pass != null) {
            pass.nodes.forEach((name, node) -> {
                LoopState loop = node.loop;
                nodes.add(new NodeView(name, node.current.keySet().stream().sorted().toList(), node.queued, node.ran,
                        loop == null ? null : loop.loop.name(), loop == null ? -1 : loop.iteration,
                        loop == null ? -1 : loop.iterations, loop != null && loop.done));
            });
        }
        List<StreamView> streams = new ArrayList<>();
        partition.streams.forEach((edge, stream) -> streams.add(new StreamView(edge, stream.buffer.tokensRegistered(),
                stream.buffer.tokensUnlanded(), stream.buffer.tokensConsumed(), stream.buffer.heldTensors(), stream.buffer.chunksCut(),
                stream.buffer.isProducerDone(), stream.buffer.isFinished())));
        return new PartitionView(partition.name, pass == null ? null : pass.walk, partition.info.fwdIndex(),
                pass != null && pass.complete, partition.pending.size(), nodes, streams);
    }
}
