package io.mstar.tensor.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.mstar.tensor.transport.ReadGrants.Rejection;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** A grant reads one tensor, for a while, with the deployment's secret; anything else is refused with its reason. */
class ReadGrantsTests {

    private static final byte[] SECRET = "a-data-plane-secret-of-thirty-two-bytes!".getBytes(StandardCharsets.UTF_8);
    private static final Duration LIFETIME = Duration.ofSeconds(60);

    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T12:00:00Z"));
    private final ReadGrants grants = ReadGrants.signedWith(SECRET, LIFETIME, clock);

    @Test
    void aGrantReadsItsTensorUntilItExpires() {
        String grant = grants.issue(42, "worker-1");
        assertThat(grant).startsWith("v1:worker-1:");
        assertThat(grants.check(grant, 42)).isNull();

        clock.advance(LIFETIME.plusSeconds(29));
        assertThat(grants.check(grant, 42)).as("within the clock skew forgiven").isNull();
        clock.advance(Duration.ofSeconds(2));
        assertThat(grants.check(grant, 42)).isEqualTo(Rejection.EXPIRED);
    }

    @Test
    void aGrantForAnotherTensorIsRefused() {
        assertThat(grants.check(grants.issue(42, "worker-1"), 43)).isEqualTo(Rejection.BAD_SIGNATURE);
        assertThat(grants.check(grants.issue(-1, "worker-1"), 1)).isEqualTo(Rejection.BAD_SIGNATURE);
    }

    @Test
    void aGrantWhoseReaderExpiryOrSignatureWasChangedIsRefused() {
        String grant = grants.issue(42, "worker-1");
        String[] parts = grant.split(":");
        String otherReader = String.join(":", parts[0], "worker-2", parts[2], parts[3]);
        String laterExpiry = String.join(":", parts[0], parts[1], Long.toString(Long.parseLong(parts[2]) + 1), parts[3]);
        byte[] signature = Base64.getUrlDecoder().decode(parts[3]);
        signature[0] ^= 1;
        String flippedBit = String.join(":", parts[0], parts[1], parts[2],
                Base64.getUrlEncoder().withoutPadding().encodeToString(signature));

        assertThat(grants.check(otherReader, 42)).isEqualTo(Rejection.BAD_SIGNATURE);
        assertThat(grants.check(laterExpiry, 42)).isEqualTo(Rejection.BAD_SIGNATURE);
        assertThat(grants.check(flippedBit, 42)).isEqualTo(Rejection.BAD_SIGNATURE);
    }

    @Test
    void aGrantSignedWithAnotherSecretIsRefused() {
        ReadGrants other = ReadGrants.signedWith("another-deployment-secret-of-32-bytes".getBytes(StandardCharsets.UTF_8),
                LIFETIME, clock);
        assertThat(grants.check(other.issue(42, "worker-1"), 42)).isEqualTo(Rejection.BAD_SIGNATURE);
    }

    @Test
    void aGrantMadeToLastLongerThanAnyReaderMintsIsRefused() {
        ReadGrants generous = ReadGrants.signedWith(SECRET, Duration.ofDays(365), clock);
        assertThat(grants.check(generous.issue(42, "worker-1"), 42)).isEqualTo(Rejection.EXPIRED);
    }

    @Test
    void noGrantOrSomethingThatIsNoGrantIsRefusedAsSuch() {
        assertThat(grants.check(null, 42)).isEqualTo(Rejection.MISSING);
        assertThat(grants.check("", 42)).isEqualTo(Rejection.MISSING);
        String good = grants.issue(42, "worker-1");
        for (String bad : new String[] {"Bearer abc", "v2" + good.substring(2), good + ":x", "v1:Worker 1:1:AA",
                good.replaceFirst(":[0-9]+:", ":soon:"), good.substring(0, good.lastIndexOf(':') + 1) + "@@@"}) {
            assertThat(grants.check(bad, 42)).as(bad).isEqualTo(Rejection.MALFORMED);
        }
    }

    @Test
    void disabledGrantsIssueNothingAndCheckNothing() {
        ReadGrants none = ReadGrants.disabled();
        assertThat(none.enabled()).isFalse();
        assertThat(none.issue(42, "worker-1")).isNull();
        assertThat(none.check(null, 42)).isNull();
        assertThat(grants.enabled()).isTrue();
    }

    @Test
    void aShortSecretOrAReaderThatIsNoEntityIdIsAMistake() {
        assertThatThrownBy(() -> ReadGrants.signedWith(new byte[31], LIFETIME, clock))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 32 bytes");
        assertThatThrownBy(() -> grants.issue(1, "worker:1")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rejectionReasonsAreTheMetricsTagValues() {
        assertThat(Rejection.BAD_SIGNATURE.value()).isEqualTo("bad_signature");
        assertThat(Rejection.MISSING.value()).isEqualTo("missing");
    }

    /** A clock the test moves. */
    static final class MutableClock extends Clock {
        private Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
