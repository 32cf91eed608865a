package io.mstar.messaging;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.mstar.metrics.MeterDeclaration;
import io.mstar.metrics.RegisteredMeters;

/**
 * The control-plane meters of one role, declared once here (docs/architecture.md#meters-declared-once-per-role). Dotted
 * names with base units; the Prometheus convention turns {@code mstar.worker.messages.sent} into
 * {@code mstar_worker_messages_sent_total} and the latency timer into {@code mstar_worker_message_latency_seconds}.
 * Tags are bounded: message types and dead-letter reasons are closed enums, never a request id.
 *
 * <p>Thread-safe (Micrometer meters are); any thread may record. {@link #close()} removes every meter this
 * instance registered.
 */
public final class ControlPlaneMeters implements AutoCloseable {

    /** Which service's meters; the second segment of every name. */
    public enum Role {
        CONDUCTOR, WORKER;

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Every meter of the control plane: name after {@code mstar.<role>.}, type, base unit, tag, description. */
    public enum Definition {
        MESSAGES_SENT("messages.sent", Meter.Type.COUNTER, null, TAG_MESSAGE_TYPE,
                "Control messages acknowledged by the broker, by message type"),
        MESSAGES_RECEIVED("messages.received", Meter.Type.COUNTER, null, TAG_MESSAGE_TYPE,
                "Control messages decoded and handed to the owner loop, by message type"),
        MESSAGES_DEAD_LETTERED("messages.dead.lettered", Meter.Type.COUNTER, null, TAG_REASON,
                "Records refused and sent to the dead-letter topic, by reason"),
        MESSAGE_LATENCY("message.latency", Meter.Type.TIMER, "seconds", TAG_MESSAGE_TYPE,
                "Send-to-receive latency from the mstar-sent-at header (includes clock skew between hosts)"),
        KAFKA_CONSUMER_LAG("kafka.consumer.lag", Meter.Type.GAUGE, "records", null,
                "Largest consumer lag over the recent window (records-lag-max of the control consumer)");

        private final MeterDeclaration declaration;

        Definition(String suffix, Meter.Type type, String baseUnit, String tagKey, String description) {
            this.declaration = new MeterDeclaration(suffix, type, baseUnit, tagKey == null ? List.of() : List.of(tagKey),
                    description);
        }

        /** This meter as {@code role} declares it, named {@code mstar.<role>.<suffix>}. */
        public MeterDeclaration declaration(Role role) {
            return declaration.under("mstar." + role.value());
        }
    }

    public static final String TAG_MESSAGE_TYPE = "message_type";
    public static final String TAG_REASON = "reason";

    private static final String LAG_METRIC = "records-lag-max";
    private static final String LAG_GROUP = "consumer-fetch-manager-metrics";

    private final MeterRegistry registry;
    private final Role role;
    private final RegisteredMeters registered;
    private final Map<String, Counter> sent = new ConcurrentHashMap<>();
    private final Map<String, Counter> received = new ConcurrentHashMap<>();
    private final Map<String, Timer> latency = new ConcurrentHashMap<>();
    private final Map<DeadLetterReason, Counter> deadLettered = new ConcurrentHashMap<>();
    private volatile DoubleSupplier consumerLag = () -> Double.NaN;

    public ControlPlaneMeters(MeterRegistry registry, Role role) {
        this.registry = registry;
        this.role = role;
        this.registered = new RegisteredMeters(registry);
        // Every reason exists from the start at 0, so a rate() over the series works before the first refusal.
        for (DeadLetterReason reason : DeadLetterReason.values()) {
            deadLettered.put(reason, registered.add(declared(Definition.MESSAGES_DEAD_LETTERED).counter(reason.value())
                    .register(registry)));
        }
        registered.add(declared(Definition.KAFKA_CONSUMER_LAG).gauge(this, m -> m.consumerLag.getAsDouble())
                .register(registry));
    }

    /**
     * Registers the sent and received series of every message type this role can send or receive at zero,
     * so dashboards and {@code rate()} see them before the first message. Types are closed wire enums.
     */
    public void declareMessageTypes(Iterable<String> sentTypes, Iterable<String> receivedTypes) {
        for (String type : sentTypes) {
            counter(sent, Definition.MESSAGES_SENT, type);
        }
        for (String type : receivedTypes) {
            counter(received, Definition.MESSAGES_RECEIVED, type);
            latencyTimer(type);
        }
    }

    public Role role() {
        return role;
    }

    /** A message of this type was acknowledged by the broker. */
    public void sent(String messageType) {
        counter(sent, Definition.MESSAGES_SENT, messageType).increment();
    }

    /** A message of this type was decoded; {@code sentAtEpochNanos} is its {@code mstar-sent-at} header. */
    public void received(String messageType, long sentAtEpochNanos, long nowEpochNanos) {
        counter(received, Definition.MESSAGES_RECEIVED, messageType).increment();
        // Clock skew between hosts can make this negative; a timer cannot hold that, so it records zero.
        long nanos = Math.max(0, nowEpochNanos - sentAtEpochNanos);
        latencyTimer(messageType).record(nanos, TimeUnit.NANOSECONDS);
    }

    private Timer latencyTimer(String messageType) {
        return latency.computeIfAbsent(messageType, type -> registered.add(declared(Definition.MESSAGE_LATENCY)
                .timer(type)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry)));
    }

    /** A record was sent to the dead-letter topic. */
    public void deadLettered(DeadLetterReason reason) {
        deadLettered.get(reason).increment();
    }

    /**
     * Binds the lag gauge to the control consumer's own metrics. {@code metrics} is asked at every scrape
     * and may return the metrics of several consumer clients; the gauge shows the largest lag among them.
     */
    public void bindConsumerLag(java.util.function.Supplier<? extends Iterable<? extends Map<MetricName, ? extends Metric>>> metrics) {
        consumerLag = () -> {
            double max = Double.NaN;
            for (Map<MetricName, ? extends Metric> clientMetrics : metrics.get()) {
                double lag = recordsLagMax(clientMetrics);
                if (!Double.isNaN(lag)) {
                    max = Double.isNaN(max) ? lag : Math.max(max, lag);
                }
            }
            return max;
        };
    }

    /**
     * The client-wide {@code records-lag-max} of one consumer's metrics (the entry without a topic tag), or
     * NaN when the consumer has not fetched yet.
     */
    public static double recordsLagMax(Map<MetricName, ? extends Metric> metrics) {
        for (Map.Entry<MetricName, ? extends Metric> entry : metrics.entrySet()) {
            MetricName name = entry.getKey();
            if (LAG_METRIC.equals(name.name()) && LAG_GROUP.equals(name.group()) && !name.tags().containsKey("topic")) {
                Object value = entry.getValue().metricValue();
                if (value instanceof Number number) {
                    double lag = number.doubleValue();
                    // Kafka reports -Infinity/NaN before the first fetch; that is "unknown", not a lag.
                    return Double.isFinite(lag) ? lag : Double.NaN;
                }
            }
        }
        return Double.NaN;
    }

    private Counter counter(Map<String, Counter> cache, Definition definition, String messageType) {
        return cache.computeIfAbsent(messageType,
                type -> registered.add(declared(definition).counter(type).register(registry)));
    }

    private MeterDeclaration declared(Definition definition) {
        return definition.declaration(role);
    }

    @Override
    public void close() {
        registered.close();
    }
}
