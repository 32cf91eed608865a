package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.mstar.deployment.ConfigDigest;

class ControlHeadersTests {

    private static final ControlHeaders.Stamp STAMP = new ControlHeaders.Stamp(
            EntityId.worker(2), new Incarnation("00ff00ff00ff00ff"), 1_700_000_000_123_456_789L, new ConfigDigest("abc123"));

    @Test
    void headerNamesAreTheArchitectureNames() {
        assertThat(ControlHeaders.SENDER).isEqualTo("mstar-sender");
        assertThat(ControlHeaders.INCARNATION).isEqualTo("mstar-incarnation");
        assertThat(ControlHeaders.SENT_AT).isEqualTo("mstar-sent-at");
        assertThat(ControlHeaders.CONFIG).isEqualTo("mstar-config");
        assertThat(ControlHeaders.DLQ_REASON).isEqualTo("mstar-dlq-reason");
        assertThat(ControlHeaders.DLQ_RECEIVER).isEqualTo("mstar-dlq-receiver");
    }

    @Test
    void aWrittenStampReadsBackAsUtf8Text() {
        Headers headers = new RecordHeaders();
        ControlHeaders.write(headers, STAMP);

        assertThat(ControlHeaders.read(headers)).isEqualTo(STAMP);
        assertThat(new String(headers.lastHeader("mstar-sent-at").value(), StandardCharsets.UTF_8))
                .isEqualTo("1700000000123456789");
        assertThat(ControlHeaders.text(headers, "mstar-sender")).isEqualTo("worker-2");
    }

    @Test
    void writingTwiceKeepsOneValuePerHeader() {
        Headers headers = new RecordHeaders();
        ControlHeaders.write(headers, STAMP);
        ControlHeaders.write(headers, STAMP);

        assertThat(headers.headers("mstar-config")).hasSize(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"mstar-sender", "mstar-incarnation", "mstar-sent-at", "mstar-config"})
    void eachMissingHeaderIsAMissingHeaderRejection(String name) {
        Headers headers = new RecordHeaders();
        ControlHeaders.write(headers, STAMP);
        headers.remove(name);

        assertThatThrownBy(() -> ControlHeaders.read(headers))
                .isInstanceOfSatisfying(ControlRecordRejectedException.class,
                        e -> assertThat(e.reason()).isEqualTo(DeadLetterReason.MISSING_HEADER))
                .hasMessageContaining(name);
    }

    @Test
    void unreadableSenderOrTimestampIsAnInvalidHeaderRejection() {
        Headers badSender = new RecordHeaders();
        ControlHeaders.write(badSender, STAMP);
        ControlHeaders.put(badSender, ControlHeaders.SENDER, "worker-x");
        Headers badTime = new RecordHeaders();
        ControlHeaders.write(badTime, STAMP);
        ControlHeaders.put(badTime, ControlHeaders.SENT_AT, "yesterday");

        for (Headers headers : new Headers[] {badSender, badTime}) {
            assertThatThrownBy(() -> ControlHeaders.read(headers))
                    .isInstanceOfSatisfying(ControlRecordRejectedException.class,
                            e -> assertThat(e.reason()).isEqualTo(DeadLetterReason.INVALID_HEADER));
        }
    }

    @Test
    void epochNanosKeepsTheClockResolution() {
        Clock clock = Clock.fixed(Instant.ofEpochSecond(1_700_000_000L, 123_456_789L), ZoneOffset.UTC);

        assertThat(ControlHeaders.epochNanos(clock)).isEqualTo(1_700_000_000_123_456_789L);
    }
}
