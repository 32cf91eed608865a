package io.mstar.conductor.lifecycle;

import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.mstar.loop.OwnerLoop;
import io.mstar.metrics.RegisteredMeters;
import io.mstar.wire.RequestOutcome;

/**
 * The request lifecycle's meters, declared once (docs/architecture.md#meters-declared-once-per-role). Tags are bounded:
 * {@code model} (deployment config), {@code status} ({@link RequestOutcome}), {@code error_type} ({@code ErrorType} or
 * {@code none}), {@code reason} ({@link AbortReason}), {@code walk} (the model's walks).
 * <ul>
 *   <li>{@code mstar.conductor.requests} (counter; model, status, error_type): ended requests;</li>
 *   <li>{@code mstar.conductor.requests.in.flight} / {@code .queued} (gauges): admitted and waiting requests;</li>
 *   <li>{@code mstar.conductor.request.queue} (timer with histogram buckets; model): submission to admission;</li>
 *   <li>{@code mstar.conductor.request.latency} (timer with buckets; model, status): submission to outcome (E2E);</li>
 *   <li>{@code mstar.conductor.request.first.chunk} (timer with buckets; model): submission to the first output chunk;</li>
 *   <li>{@code mstar.conductor.request.inter.chunk} (timer with buckets; model): between consecutive output chunks;</li>
 *   <li>{@code mstar.conductor.cancellations} (counter; reason): aborts by reason;</li>
 *   <li>{@code mstar.conductor.abort.release} (timer): abort to the request's release ({@code RemoveRequest});</li>
 *   <li>{@code mstar.conductor.drain.timeouts} (counter): removals forced by the drain timeout;</li>
 *   <li>{@code mstar.conductor.transition.overhead} (timer; model, walk): last {@code WorkerGraphsDone} of a pass
 *   in to the next walk's {@code InputSignals} out;</li>
 *   <li>{@code mstar.conductor.loop.queue.wait} (timer with buckets): how long a command waited in the lifecycle
 *   loop's queue, the hand-off from the listener or API thread plus the turn ahead of it.</li>
 * </ul>
 */
public final class RequestMeters implements AutoCloseable {

    public static final String REQUESTS = "mstar.conductor.requests";
    public static final String IN_FLIGHT = "mstar.conductor.requests.in.flight";
    public static final String QUEUED = "mstar.conductor.requests.queued";
    public static final String QUEUE_TIME = "mstar.conductor.request.queue";
    public static final String LATENCY = "mstar.conductor.request.latency";
    public static final String FIRST_CHUNK = "mstar.conductor.request.first.chunk";
    public static final String INTER_CHUNK = "mstar.conductor.request.inter.chunk";
    public static final String CANCELLATIONS = "mstar.conductor.cancellations";
    public static final String ABORT_RELEASE = "mstar.conductor.abort.release";
    public static final String DRAIN_TIMEOUTS = "mstar.conductor.drain.timeouts";
    public static final String TRANSITION_OVERHEAD = "mstar.conductor.transition.overhead";
    public static final String LOOP_QUEUE_WAIT = "mstar.conductor.loop.queue.wait";

    /** Bucket bounds of queue time, first chunk and end to end: 5 ms to five minutes (long generations). */
    static final Duration[] LATENCY_BUCKETS = seconds(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
            120, 300);
    /** Bucket bounds between chunks: 0.5 ms to 10 s. */
    static final Duration[] CHUNK_GAP_BUCKETS = seconds(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
            0.5, 1, 2.5, 5, 10);

    private final MeterRegistry registry;
    private final RegisteredMeters registered;
    private final Counter drainTimeouts;
    private final Timer abortRelease;
    private final Timer loopQueueWait;
    private volatile IntSupplier inFlight = () -> 0;
    private volatile IntSupplier queued = () -> 0;

    public RequestMeters(MeterRegistry registry) {
        this.registry = registry;
        this.registered = new RegisteredMeters(registry);
        registered.add(Gauge.builder(IN_FLIGHT, this, m -> m.inFlight.getAsInt())
                .description("Admitted requests not yet removed (running or draining)").register(registry));
        registered.add(Gauge.builder(QUEUED, this, m -> m.queued.getAsInt())
                .description("Requests waiting for admission").register(registry));
        drainTimeouts = registered.add(Counter.builder(DRAIN_TIMEOUTS)
                .description("Requests removed after the drain timeout instead of every ReadsDone").register(registry));
        abortRelease = registered.add(Timer.builder(ABORT_RELEASE)
                .description("Abort of an admitted request to its release (RemoveRequest sent, inputs freed)")
                .register(registry));
        loopQueueWait = registered.add(histogram(Timer.builder(LOOP_QUEUE_WAIT).description(
                "Time a command waited in the lifecycle loop's queue: the hand-off plus the turn ahead of it"),
                OwnerLoop.queueWaitBuckets()).register(registry));
        for (AbortReason reason : AbortReason.values()) {
            registered.add(cancellationCounter(reason));
        }
    }

    /** Published gauge values, read at scrape time; the suppliers must read snapshots, not loop state. */
    public void bindGauges(IntSupplier inFlight, IntSupplier queued) {
        this.inFlight = inFlight;
        this.queued = queued;
    }

    void ended(String model, RequestOutcome outcome, String errorType, Duration latency) {
        String error = errorType == null ? "none" : errorType;
        registered.<Counter>computeIfAbsent(List.of(REQUESTS, model, outcome.value(), error), () ->
                Counter.builder(REQUESTS).description("Ended requests by outcome and error type")
                        .tag("model", model).tag("status", outcome.value()).tag("error_type", error)
                        .register(registry)).increment();
        registered.<Timer>computeIfAbsent(List.of(LATENCY, model, outcome.value()), () ->
                histogram(Timer.builder(LATENCY).description("Submission to outcome (end to end)"), LATENCY_BUCKETS)
                        .tag("model", model).tag("status", outcome.value()).register(registry)).record(latency);
    }

    void queued(String model, Duration wait) {
        modelTimer(QUEUE_TIME, model, "Submission to admission", LATENCY_BUCKETS).record(wait);
    }

    void firstChunk(String model, Duration sinceSubmit) {
        modelTimer(FIRST_CHUNK, model, "Submission to the first output chunk", LATENCY_BUCKETS).record(sinceSubmit);
    }

    void interChunk(String model, Duration gap) {
        modelTimer(INTER_CHUNK, model, "Time between consecutive output chunks of a request", CHUNK_GAP_BUCKETS)
                .record(gap);
    }

    private Timer modelTimer(String name, String model, String description, Duration[] buckets) {
        return registered.computeIfAbsent(List.of(name, model), () ->
                histogram(Timer.builder(name).description(description), buckets).tag("model", model).register(registry));
    }

    /** Runs on the lifecycle loop before each command (OwnerLoop's queue wait). */
    void loopQueueWait(long nanos) {
        loopQueueWait.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    void cancelled(AbortReason reason) {
        cancellationCounter(reason).increment();
    }

    void abortReleased(Duration sinceAbort) {
        abortRelease.record(sinceAbort);
    }

    void drainTimedOut() {
        drainTimeouts.increment();
    }

    void transition(String model, String walk, Duration overhead) {
        registered.<Timer>computeIfAbsent(List.of(TRANSITION_OVERHEAD, model, walk), () ->
                Timer.builder(TRANSITION_OVERHEAD)
                        .description("Last WorkerGraphsDone of a pass in to the next walk's InputSignals out")
                        .tag("model", model).tag("walk", walk).register(registry)).record(overhead);
    }

    /**
     * Fixed buckets for the timers the dashboards and the SLO alert take quantiles of ({@code histogram_quantile}
     * needs {@code _bucket} series): a few explicit bounds keep the series count low and the SLO on a bound.
     */
    private static Timer.Builder histogram(Timer.Builder builder, Duration[] buckets) {
        return builder.serviceLevelObjectives(buckets);
    }

    private static Duration[] seconds(double... bounds) {
        return java.util.Arrays.stream(bounds).mapToObj(s -> Duration.ofNanos(Math.round(s * 1e9))).toArray(Duration[]::new);
    }

    private Counter cancellationCounter(AbortReason reason) {
        return Counter.builder(CANCELLATIONS).description("Aborted requests by reason")
                .tag("reason", reason.value()).register(registry);
    }

    @Override
    public void close() {
        registered.close();
    }
}
