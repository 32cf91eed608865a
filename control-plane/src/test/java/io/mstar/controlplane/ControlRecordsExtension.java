package io.mstar.controlplane;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.context.ApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaBroker;
import org.springframework.test.context.junit.jupiter.SpringExtension;

import io.mstar.deployment.ConfigDigest;
import io.mstar.messaging.ControlRecords;
import io.mstar.messaging.EntityId;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.Incarnation;

/**
 * For a service's {@code @SpringBootTest} on an embedded broker, registered on an instance field: fresh
 * {@link ControlRecords} on that broker for each test, usable once the service's inbox consumer holds its position
 * (a record sent before then could fall before the offset it starts from), closed after the test. Lives in
 * control-plane's test-jar so the conductor's and the workers' control-plane tests share it.
 */
public final class ControlRecordsExtension implements BeforeEachCallback, AfterEachCallback {

    private static final Duration POSITIONED = Duration.ofSeconds(20);

    private ControlRecords records;

    @Override
    public void beforeEach(ExtensionContext context) {
        ApplicationContext spring = SpringExtension.getApplicationContext(context);
        records = new ControlRecords(spring.getBean(EmbeddedKafkaBroker.class).getBrokersAsString());
        await().atMost(POSITIONED).until(spring.getBean(InboxPosition.class)::isPositioned);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        records.close();
    }

    /** {@link ControlRecords#send}. */
    public void send(String topic, String key, byte[] value, EntityId sender, Incarnation incarnation, ConfigDigest digest) {
        records.send(topic, key, value, sender, incarnation, digest);
    }

    /** {@link ControlRecords#readFromStart}. */
    public List<ConsumerRecord<String, byte[]>> readFromStart(String topic, int count, Duration timeout) {
        return records.readFromStart(topic, count, timeout);
    }
}
