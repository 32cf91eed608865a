package io.mstar.worker.engine;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Worker settings ({@code mstar.worker.*}).
 *
 * @param id this worker's ordinal (default 0): a StatefulSet pod ordinal on Kubernetes, a launcher index
 *     locally; it must appear in the deployment config's {@code workers} lists. It names the entity
 *     ({@code worker-<id>}), the inbox topic and the consumer group.
 * @param setupDoneInterval how often {@code SetupDone} is repeated (default 2s). It is the heartbeat the
 *     conductor's {@code worker-loss-timeout} (6s) watches, and how soon a conductor that starts after this
 *     worker learns about it: shorter detects losses sooner for a little more traffic; keep it well under a
 *     third of the loss timeout.
 * @param device where tensors live and kernels run (default {@code auto}): {@code auto} takes GPU 0 when the CUDA
 *     driver sees a GPU, else host memory; {@code host} always host memory; {@code cuda} GPU 0, and start-up fails
 *     without one.
 */
@ConfigurationProperties("mstar.worker")
public record WorkerProperties(@DefaultValue("0") int id, @DefaultValue("2s") Duration setupDoneInterval,
        @DefaultValue("auto") DeviceChoice device) {

    public WorkerProperties {
        if (id < 0) {
            throw new IllegalArgumentException("mstar.worker.id must be >= 0, was " + id);
        }
        if (setupDoneInterval.isNegative() || setupDoneInterval.isZero()) {
            throw new IllegalArgumentException("mstar.worker.setup-done-interval must be positive, was " + setupDoneInterval);
        }
    }
}
