package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The admin API's bearer token for a local stack: random per start, written to a file only its
 * owner can read, which the conductor loads ({@code mstar.conductor.admin.token-file}). There is never a
 * built-in default token.
 */
public record AdminToken(Path file, String value) {

    public static final String FILE_NAME = "admin-token";

    @Override
    public String toString() {
        return "AdminToken[" + file + "]";
    }

    static AdminToken write(Path file) {
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String value = HexFormat.of().formatHex(random);
        try {
            Files.createDirectories(file.getParent());
            Files.deleteIfExists(file);
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, value);
            return new AdminToken(file, value);
        } catch (IOException e) {
            throw new StackException("cannot write the admin token " + file, e);
        }
    }
}
