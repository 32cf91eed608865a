package io.mstar.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.controlplane.DataPlaneSecurityProperties.Authentication;
import io.mstar.tensor.transport.ReadGrants;

/** The data-plane secret comes from a file shared by the deployment; a service without one does not start. */
class DataPlaneSecurityPropertiesTests {

    private static final String SECRET = "0123456789abcdef0123456789abcdef";

    @TempDir
    Path dir;

    @Test
    void grantsSignedWithTheSecretFileAreCheckedByAnotherProcessWithTheSameFile() throws IOException {
        Path file = Files.writeString(dir.resolve("secret"), SECRET + "\n");
        ReadGrants one = properties(file.toString(), "").readGrants();
        ReadGrants other = properties(file.toString(), "").readGrants();
        assertThat(one.enabled()).isTrue();
        assertThat(other.check(one.issue(5, "worker-0"), 5)).as("surrounding white space is not the secret").isNull();
        assertThat(properties("", SECRET).readGrants().check(one.issue(5, "worker-0"), 5)).isNull();
    }

    @Test
    void withoutASecretTheServiceDoesNotStartAndSaysWhatToSet() {
        assertThatThrownBy(() -> properties("", "").readGrants()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mstar.data-plane.secret-file").hasMessageContaining("authentication=none");
        assertThatThrownBy(() -> properties(dir.resolve("absent").toString(), "").readGrants())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot be read");
        assertThatThrownBy(() -> properties("", "too-short").readGrants()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("at least 32 bytes");
    }

    @Test
    void authenticationNoneChecksNothing() {
        ReadGrants none = new DataPlaneSecurityProperties(Authentication.NONE, "", "", Duration.ofSeconds(60))
                .readGrants();
        assertThat(none.enabled()).isFalse();
    }

    private static DataPlaneSecurityProperties properties(String file, String secret) {
        return new DataPlaneSecurityProperties(Authentication.GRANTS, file, secret, Duration.ofSeconds(60));
    }
}
