package io.mstar.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

class MeterDeclarationTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void aBuiltMeterCarriesTheDeclaredNameUnitDescriptionAndTagKeys() {
        MeterDeclaration bytes = new MeterDeclaration("transfer.bytes", Meter.Type.COUNTER, "bytes",
                List.of("transport", "reason"), "Bytes read").under("mstar.worker");

        Counter counter = bytes.counter("shm", "timeout").register(registry);

        assertThat(counter.getId().getName()).isEqualTo("mstar.worker.transfer.bytes");
        assertThat(counter.getId().getBaseUnit()).isEqualTo("bytes");
        assertThat(counter.getId().getDescription()).isEqualTo("Bytes read");
        assertThat(counter.getId().getTags()).containsExactly(Tag.of("reason", "timeout"), Tag.of("transport", "shm"));
    }

    @Test
    void aGaugeReadsItsSourceAtEachScrape() {
        AtomicInteger live = new AtomicInteger(3);
        new MeterDeclaration("mstar.worker.live", Meter.Type.GAUGE, null, List.of(), "Live things")
                .gauge(live, AtomicInteger::get).register(registry);
        live.set(5);

        assertThat(registry.get("mstar.worker.live").gauge().value()).isEqualTo(5.0);
    }

    @Test
    void tagValuesMustMatchTheDeclaredKeysAndTheBuilderTheType() {
        MeterDeclaration step = new MeterDeclaration("mstar.worker.step", Meter.Type.TIMER, "seconds",
                List.of("model", "node"), "Kernel time");

        assertThatThrownBy(() -> step.timer("counter")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[model, node]");
        assertThatThrownBy(() -> step.counter("counter", "step")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("TIMER");
        assertThat(registry.getMeters()).isEmpty();
    }

    @Test
    void prometheusNamesFollowTheRegistryConvention() {
        assertThat(new MeterDeclaration("mstar.worker.tensor.transfer.bytes", Meter.Type.COUNTER, "bytes", List.of(), "d")
                .prometheusName()).as("a name ending in its unit keeps one").isEqualTo("mstar_worker_tensor_transfer_bytes_total");
        assertThat(new MeterDeclaration("mstar.worker.tensor.memory", Meter.Type.GAUGE, "bytes", List.of(), "d")
                .prometheusName()).isEqualTo("mstar_worker_tensor_memory_bytes");
        MeterDeclaration timer = new MeterDeclaration("mstar.worker.step", Meter.Type.TIMER, "seconds", List.of(), "d");
        assertThat(timer.prometheusName()).isEqualTo("mstar_worker_step_seconds");
        assertThat(timer.scrapedSample()).isEqualTo("mstar_worker_step_seconds_count");
        assertThat(new MeterDeclaration("mstar.worker.batch.size", Meter.Type.DISTRIBUTION_SUMMARY, null, List.of(), "d")
                .scrapedSample()).isEqualTo("mstar_worker_batch_size_count");
        assertThat(new MeterDeclaration("mstar.worker.kafka.consumer.lag", Meter.Type.GAUGE, "records", List.of(), "d")
                .scrapedSample()).isEqualTo("mstar_worker_kafka_consumer_lag_records");
    }
}
