package io.mstar.repository;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The clone: its root, the files checked, and every file and folder a link may point at. */
final class Repository {
    private final Path root;
    private final List<String> checked;
    private final Set<String> files;
    private final Set<String> folders = new LinkedHashSet<>();
    private final Map<String, Optional<Text>> texts = new HashMap<>();

    private Repository(Path root, List<String> checked, Set<String> files) {
        this.root = root;
        this.checked = checked;
        this.files = files;
        folders.add("");
        for (String f : files) {
            for (int slash = f.indexOf('/'); slash >= 0; slash = f.indexOf('/', slash + 1)) {
                folders.add(f.substring(0, slash));
            }
        }
    }

    static Repository find(Path start, boolean includeUntracked) {
        Path root = null;
        for (Path dir = start; dir != null && root == null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve(".git")) || isParentPom(dir.resolve("pom.xml"))) {
                root = dir;
            }
        }
        assertThat(root).as("no folder above %s holds .git or the mstar-parent pom.xml", start).isNotNull();
        assertThat(root.resolve(".git")).as("a git checkout, so the tracked files can be listed").exists();
        List<String> tracked = existing(root, git(root, "ls-files", "-z"));
        List<String> untracked = existing(root, git(root, "ls-files", "-z", "--others", "--exclude-standard"));
        Set<String> all = new LinkedHashSet<>(tracked);
        all.addAll(untracked);
        List<String> checked = new ArrayList<>(tracked);
        if (includeUntracked) {
            checked.addAll(untracked);
        }
        return new Repository(root, List.copyOf(checked), all);
    }

    private static boolean isParentPom(Path pom) {
        if (!Files.isRegularFile(pom)) {
            return false;
        }
        try {
            String xml = Files.readString(pom).replaceAll("(?s)<parent>.*?</parent>", "");
            return xml.contains("<artifactId>mstar-parent</artifactId>");
        } catch (IOException e) {
            return false;
        }
    }

    private static List<String> existing(Path root, List<String> paths) {
        List<String> out = new ArrayList<>();
        for (String p : paths) {
            if (Files.isRegularFile(root.resolve(p))) {
                out.add(p); // a tracked file deleted in the working tree is not there to check
            }
        }
        return out;
    }

    private static List<String> git(Path root, String... args) {
        List<String> command = new ArrayList<>(List.of("git", "-c", "core.quotepath=off"));
        command.addAll(List.of(args));
        try {
            Process process = new ProcessBuilder(command).directory(root.toFile()).start();
            process.getOutputStream().close();
            CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()));
            byte[] out = readAll(process.getInputStream());
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish in 60 s");
            }
            if (process.exitValue() != 0) {
                throw new AssertionError(String.join(" ", command) + " failed (" + process.exitValue() + "): "
                        + new String(err.join(), StandardCharsets.UTF_8).strip());
            }
            List<String> paths = new ArrayList<>();
            for (String p : new String(out, StandardCharsets.UTF_8).split("\0")) {
                if (!p.isEmpty()) {
                    paths.add(p);
                }
            }
            return paths;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + String.join(" ", command), e);
        }
    }

    private static byte[] readAll(InputStream in) {
        try (in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    List<String> checkedFiles() {
        return checked;
    }

    boolean exists(String path) {
        return files.contains(path) || folders.contains(path);
    }

    boolean isFile(String path) {
        return files.contains(path);
    }

    /** The file as text, or null when it is binary (a NUL byte in its first 8000 bytes, as git decides). */
    Text text(String path) {
        return texts.computeIfAbsent(path, p -> {
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(root.resolve(p));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            for (int i = 0; i < Math.min(bytes.length, 8000); i++) {
                if (bytes[i] == 0) {
                    return Optional.<Text>empty();
                }
            }
            try {
                return Optional.of(Text.of(StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPLACE)
                        .onUnmappableCharacter(CodingErrorAction.REPLACE)
                        .decode(ByteBuffer.wrap(bytes)).toString().replace("\r\n", "\n")));
            } catch (CharacterCodingException e) {
                throw new IllegalStateException(e); // cannot happen with REPLACE
            }
        }).orElse(null);
    }
}
