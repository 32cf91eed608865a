package io.mstar.messaging;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the cluster who it is every {@code interval} on its own thread and publishes when it last answered.
 * Readiness reads that; liveness never does (a broker outage must not get a healthy process restarted).
 * It does not own the {@link Admin}; whoever created it closes it, after {@link #close()}.
 */
public final class KafkaReachability implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KafkaReachability.class);

    private final Admin admin;
    private final Duration interval;
    private final Thread thread;
    private volatile long lastSuccessNanos;
    private volatile boolean everSucceeded;
    private volatile String lastError = "not probed yet";
    private volatile boolean running = true;

    public KafkaReachability(Admin admin, Duration interval, String threadName) {
        this.admin = admin;
        this.interval = interval;
        this.thread = new Thread(this::run, threadName);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** True when the cluster answered within the last three intervals. */
    public boolean isReachable() {
        return everSucceeded && System.nanoTime() - lastSuccessNanos <= 3 * interval.toNanos();
    }

    /** Time since the last answer, or null when there never was one. */
    public Duration sinceLastSuccess() {
        return everSucceeded ? Duration.ofNanos(System.nanoTime() - lastSuccessNanos) : null;
    }

    public String lastError() {
        return lastError;
    }

    private void run() {
        boolean wasReachable = false;
        while (running) {
            try {
                admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) interval.toMillis()))
                        .clusterId().get(interval.toMillis(), TimeUnit.MILLISECONDS);
                lastSuccessNanos = System.nanoTime();
                everSucceeded = true;
                lastError = null;
                if (!wasReachable) {
                    log.info("Kafka cluster reachable");
                    wasReachable = true;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException | RuntimeException e) {
                lastError = e.toString();
                if (wasReachable) {
                    log.warn("Kafka cluster not reachable: {}", e.toString());
                    wasReachable = false;
                }
            }
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Stops the probe thread and waits briefly for it; the admin client stays open. */
    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(interval.toMillis() * 2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
