package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local stack's secrets: fresh at every start, long enough to sign with, readable by their owner alone. */
class SecretFileTests {

    @TempDir
    Path stateDir;

    @Test
    void eachSecretIsFreshLongEnoughAndReadableByItsOwnerAlone() throws IOException {
        for (String name : new String[] {SecretFile.ADMIN_TOKEN, SecretFile.DATA_PLANE_SECRET}) {
            SecretFile first = SecretFile.write(stateDir.resolve(name));
            SecretFile second = SecretFile.write(stateDir.resolve(name));

            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(second.file()))).as(name)
                    .isEqualTo("rw-------");
            assertThat(Files.readString(second.file())).isEqualTo(second.value());
            assertThat(second.value()).as("32 random bytes as hex").matches("[0-9a-f]{64}");
            assertThat(second.value()).as("a new start, a new secret").isNotEqualTo(first.value());
            assertThat(second.toString()).as("never printed").doesNotContain(second.value());
        }
    }
}
