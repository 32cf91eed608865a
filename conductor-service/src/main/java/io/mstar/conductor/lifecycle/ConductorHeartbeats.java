package io.mstar.conductor.lifecycle;

import io.mstar.messaging.EntityId;
import io.mstar.wire.ConductorHeartbeat;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Tells every configured worker, every {@code interval}, that this conductor incarnation is alive. A worker that
 * stops hearing it, or hears another incarnation, drops the requests this one drove (workers' {@code ConductorWatch}):
 * after a conductor crash nobody else would ever remove them.
 *
 * <p>Its own thread, {@code mstar-conductor-heartbeat}, not the lifecycle loop: it touches no request state, and a
 * send may block for the producer's {@code max.block.ms} while the broker is away, which must not stall the loop.
 */
public final class ConductorHeartbeats implements SmartLifecycle {

    public static final String THREAD_NAME = "mstar-conductor-heartbeat";

    private static final Logger log = LoggerFactory.getLogger(ConductorHeartbeats.class);

    private final List<EntityId> workers;
    private final Duration interval;
    private final WorkerOutbox outbox;
    private ScheduledExecutorService timer;

    public ConductorHeartbeats(List<EntityId> workers, Duration interval, WorkerOutbox outbox) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("heartbeat interval must be positive, was " + interval);
        }
        this.workers = List.copyOf(workers);
        this.interval = interval;
        this.outbox = outbox;
    }

    private void beat() {
        ConductorHeartbeat heartbeat = new ConductorHeartbeat(interval.toMillis());
        for (EntityId worker : workers) {
            try {
                outbox.send(worker, heartbeat);
            } catch (RuntimeException e) {
                log.debug("heartbeat to {} not sent: {}", worker, e.toString());
            }
        }
    }

    @Override
    public synchronized void start() {
        if (timer == null) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread thread = new Thread(r, THREAD_NAME);
                thread.setDaemon(true);
                return thread;
            });
            timer.scheduleWithFixedDelay(this::beat, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public synchronized void stop() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return timer != null;
    }
}
