package io.mstar.worker.engine;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.mstar.tensor.device.DeviceKind;

/**
 * Engine settings ({@code mstar.worker.engine.*}).
 *
 * @param maxBatchSize        requests per batch at most (default 64), also capped by each kernel's own limit: larger
 *                            batches amortise a launch over more requests at the price of step latency
 * @param tombstones          removed request ids remembered (default 10000), so a late message for one is dropped
 *                            (its tensor edges acknowledged unread) instead of parked; older ones are forgotten first
 * @param maxParkedPerRequest messages parked for a request not known yet (default 1024); beyond that the oldest is
 *                            dropped and counted, bounding memory when a {@code NewRequest} never comes
 * @param inlineOutputMaxBytes an output of at most this many bytes (default 1024; 0: none) travels inside its message,
 *                            {@code ResultTensors} to the client or {@code InputSignals} to another worker, and takes
 *                            no reference, so the receiver neither reads nor acknowledges it: a token's ids or text.
 *                            Larger ones (audio, embeddings) are read through the tensor transport
 * @param pipeline            steps run on the worker's step thread while the loop goes on with control work (default
 *                            true); false runs each step on the loop, as a comparison baseline
 *                            (docs/worker-runtime.md#the-step-pipeline)
 * @param speculation         whether the loop builds the next step of a decode loop while the current one runs
 *                            (docs/worker-runtime.md#speculation): {@code auto} (default) on GPUs and host devices
 *                            alike, where it beat steps on the loop and the pipeline without it; {@code on}; {@code
 *                            off}. Needs the pipeline
 * @param kvHostPoolFactor    host pages per device page of each KV cache (default 4): where requests' pages go when
 *                            the device pool runs short (docs/streaming-and-kv.md#offload-and-reload); 0 turns offload
 *                            off. Checked at start-up, and when a cache is first taken against the 2 GiB one host pool
 *                            can hold
 * @param lockstepTimeout     how long the ranks of a tensor-parallel group wait for each other (default 6s, the
 *                            conductor's {@code worker-loss-timeout}): a collective past it fails its step with TIMEOUT
 *                            and the group is joined again at the next; a follower drops a leader's batch that could
 *                            not start within it, and applies a conductor's removal the leader never relayed
 *                            (docs/tensor-parallelism.md#a-lost-rank)
 */
@ConfigurationProperties("mstar.worker.engine")
public record EngineProperties(@DefaultValue("64") int maxBatchSize, @DefaultValue("10000") int tombstones,
        @DefaultValue("1024") int maxParkedPerRequest, @DefaultValue("1024") int inlineOutputMaxBytes,
        @DefaultValue("true") boolean pipeline, @DefaultValue("auto") Speculation speculation,
        @DefaultValue("4") double kvHostPoolFactor, @DefaultValue("6s") Duration lockstepTimeout) {

    /** {@code mstar.worker.engine.speculation}. */
    public enum Speculation {
        AUTO, ON, OFF;

        /**
         * Whether a worker on a device of {@code kind} speculates: {@code auto} does on both kinds, where it beat
         * steps on the loop and the pipeline without it (benchmarks/README.md#serving-efficiency).
         */
        public boolean enabled(DeviceKind kind) {
            return this == ON || this == AUTO && (kind == DeviceKind.CUDA || kind == DeviceKind.HOST);
        }
    }

    public EngineProperties {
        if (maxBatchSize < 1 || tombstones < 1 || maxParkedPerRequest < 1) {
            throw new IllegalArgumentException("mstar.worker.engine.* must be positive: max-batch-size " + maxBatchSize
                    + ", tombstones " + tombstones + ", max-parked-per-request " + maxParkedPerRequest);
        }
        if (inlineOutputMaxBytes < 0) {
            throw new IllegalArgumentException("mstar.worker.engine.inline-output-max-bytes must not be negative, was "
                    + inlineOutputMaxBytes);
        }
        if (speculation == null) {
            speculation = Speculation.AUTO;
        }
        if (!(kvHostPoolFactor >= 0) || Double.isInfinite(kvHostPoolFactor)) {
            throw new IllegalArgumentException("mstar.worker.engine.kv-host-pool-factor must be a finite number >= 0, was "
                    + kvHostPoolFactor);
        }
        if (lockstepTimeout == null || lockstepTimeout.isNegative() || lockstepTimeout.isZero()) {
            throw new IllegalArgumentException("mstar.worker.engine.lockstep-timeout must be positive, was "
                    + lockstepTimeout);
        }
        if (!pipeline && speculation == Speculation.ON) {
            throw new IllegalArgumentException("mstar.worker.engine.speculation=on needs mstar.worker.engine.pipeline=true");
        }
    }

    /** These settings with the step pipeline and speculation as given (benchmarks, tests). */
    public EngineProperties withSteps(boolean pipeline, Speculation speculation) {
        return new EngineProperties(maxBatchSize, tombstones, maxParkedPerRequest, inlineOutputMaxBytes, pipeline,
                speculation, kvHostPoolFactor, lockstepTimeout);
    }

    /** These settings with outputs of at most {@code bytes} travelling inline (0: every tensor is read). */
    public EngineProperties withInlineOutputMaxBytes(int bytes) {
        return new EngineProperties(maxBatchSize, tombstones, maxParkedPerRequest, bytes, pipeline, speculation,
                kvHostPoolFactor, lockstepTimeout);
    }

    /** These settings with {@code factor} host pages per device page of each KV cache. */
    public EngineProperties withKvHostPoolFactor(double factor) {
        return new EngineProperties(maxBatchSize, tombstones, maxParkedPerRequest, inlineOutputMaxBytes, pipeline,
                speculation, factor, lockstepTimeout);
    }

    /** These settings with the tensor-parallel ranks waiting {@code timeout} for each other. */
    public EngineProperties withLockstepTimeout(Duration timeout) {
        return new EngineProperties(maxBatchSize, tombstones, maxParkedPerRequest, inlineOutputMaxBytes, pipeline,
                speculation, kvHostPoolFactor, timeout);
    }

    public static EngineProperties defaults() {
        return new EngineProperties(64, 10_000, 1024, 1024, true, Speculation.AUTO, KvCaches.DEFAULT_HOST_POOL_FACTOR,
                Duration.ofSeconds(6));
    }
}
