package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * A secret of a local stack: 32 random bytes per start, hex, written to a file only its owner can read. The admin
 * API's bearer token ({@value #ADMIN_TOKEN}, loaded by the conductor through {@code mstar.conductor.admin.token-file})
 * and the data-plane secret that signs tensor read grants ({@value #DATA_PLANE_SECRET}, loaded by every service
 * through {@code mstar.data-plane.secret-file}). There is never a built-in default.
 */
public record SecretFile(Path file, String value) {

    public static final String ADMIN_TOKEN = "admin-token";
    public static final String DATA_PLANE_SECRET = "data-plane-secret";

    @Override
    public String toString() {
        return "SecretFile[" + file + "]";
    }

    static SecretFile write(Path file) {
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String value = HexFormat.of().formatHex(random);
        try {
            Files.createDirectories(file.getParent());
            Files.deleteIfExists(file);
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, value);
            return new SecretFile(file, value);
        } catch (IOException e) {
            throw new StackException("cannot write the secret " + file, e);
        }
    }
}
