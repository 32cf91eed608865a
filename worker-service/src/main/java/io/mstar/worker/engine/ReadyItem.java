package io.mstar.worker.engine;

/** A node of one request's pass whose inputs are all there. */
record ReadyItem(WorkerRequest request, PartitionState partition, PartitionPass pass, NodeState node) {
}
