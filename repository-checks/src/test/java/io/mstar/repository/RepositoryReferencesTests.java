package io.mstar.repository;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The repository stands on its own: every link and every reference to a Markdown file written in its text resolves
 * inside the clone, anchors included, and nothing points at a design or a path that lives outside it.
 *
 * <p>The files checked are the tracked ones ({@code git ls-files}); with
 * {@code -Dmstar.repository-checks.include-untracked=true} files not yet added (and not ignored) are checked too, so a
 * new page can be checked before it is committed. A link may point at a tracked file or at one not yet added, never
 * at an ignored one (a build output), which a fresh clone would not have.
 *
 * <p>Anchors follow GitHub's rule: the heading text lower-cased, every character that is not a letter, a digit, a
 * space, a hyphen or an underscore dropped, spaces turned into hyphens; a repeated heading gets {@code -1},
 * {@code -2}, ... An explicit {@code <a id="...">} or {@code <a name="...">} is an anchor too.
 *
 * <p>Each check reports every offending {@code file:line} at once, so one run shows everything to fix.
 */
class RepositoryReferencesTests {

    /** This file spells out the words and paths the checks look for, so the text scans leave it out. */
    private static final String SELF = "repository-checks/src/test/java/io/mstar/repository/RepositoryReferencesTests.java";

    /** Where plain references to Markdown files are looked for. */
    private static final Set<String> PLAIN_REFERENCE_EXTENSIONS = Set.of(".java", ".yaml", ".yml", ".md", ".sh",
            ".properties");

    /**
     * Words that point outside the repository or describe how it was made: the design documents that once lived
     * beside it, diary words, and the development tracker's issue numbers. Written with {@code \s} so this file's
     * own text does not match.
     */
    private static final Pattern FLAGGED = Pattern.compile(
            "\\.\\./shared|ARCHITECTURE\\s§|STYLE\\s§|[Ss]ession|\\b[Ii]ssue\\s[0-9]");

    /**
     * The legitimate uses of a flagged word, each as narrow as it can be: a path pattern (null: any file) and the span
     * of the line that may hold the word. Anything else, in particular a sentence about how the project was made,
     * fails {@link #noTextFileCitesAnOutsideDesignOrSaysHowTheProjectWasMade()}.
     */
    private static final List<Allowed> ALLOWED = List.of(
            // The descriptor field of the reference's TensorPointerInfo: where the producer's tensor server listens.
            new Allowed("source_session_id (wire field)", null, "\\bsource_session_id\\b"),
            // Its Java accessor and the fields it is built from.
            new Allowed("sourceSessionId (accessor)", "\\.java$", "\\bsourceSessionId\\b"),
            // TensorServer.sessionId() and the host:port values that become source_session_id.
            new Allowed("sessionId (TensorServer)", "\\.java$", "\\bsessionId\\b"),
            // The decoder's local for the decoded source_session_id.
            new Allowed("sessionV (decoder local)", "^shared-model/src/main/java/io/mstar/wire/ModelDecoding\\.java$",
                    "\\bsessionV\\b"),
            // The host part of source_session_id, which decides whether a reader may use the arena.
            new Allowed("session host (descriptor's host)", null, "\\bsession host\\b"),
            // The per-batch constants of a descriptor that the fast bookkeeper interns.
            new Allowed("(session, entity, ...) (interned descriptor fields)",
                    "^tensor-runtime/src/main/java/io/mstar/tensor/bookkeeping/(FastTensorBookkeeping|Origins)\\.java$",
                    "\\(session, entity, node, walk"),
            // The cross-process transport tests pass the producer's host:port around as "session".
            new Allowed("session (transport test's host:port)",
                    "^tensor-runtime/src/test/java/io/mstar/tensor/transport/"
                            + "(TransportCrossProcessTests|TensorConsumerMain)\\.java$",
                    "\\bsession\\b"),
            // ONNX Runtime's API (OrtSession, its options and results) and the sessions run on it: by the ONNX node
            // kernel, minilm-embed's host encoder, its reference test and its benchmark, all opened by OnnxSessions.
            new Allowed("OrtSession (ONNX Runtime)",
                    "^(worker-service/src/(main|test)/java/io/mstar/worker/kernel/(onnx|minilm)|"
                            + "benchmarks/src/main/java/io/mstar/bench/minilm)/[^/]+\\.java$",
                    "\\bOrtSession(\\.SessionOptions|\\.Result)?\\b|\\bOnnxSessions\\b|\\bcreateSession\\b"
                            + "|\\bsession\\b"),
            // Kafka's consumer group setting.
            new Allowed("Kafka session timeout", null, "\\b[Ss]ession timeout\\b|\\bsession\\.timeout\\.ms\\b"));

    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");
    private static final Pattern INLINE_LINK = Pattern.compile(
            // a run of plain characters is one possessive step: a step per character overflowed the stack on a
            // bracket left open for a few thousand characters (a half-open interval in prose)
            "!?\\[(?:[^\\[\\]\\\\]++|\\\\.|\\[[^\\[\\]]*\\])*\\]"
                    + "\\(\\s*(<[^<>\\n]*>|[^\\s()<>]*(?:\\([^\\s()]*\\)[^\\s()]*)*)"
                    + "(?:\\s+(?:\"[^\"]*\"|'[^']*'|\\([^()]*\\)))?\\s*\\)");
    private static final Pattern REFERENCE_DEFINITION = Pattern.compile(
            "(?m)^ {0,3}\\[[^\\]\\n]+\\]:[ \\t]*(<[^<>\\n]*>|\\S+)");
    private static final Pattern ATX_HEADING = Pattern.compile("^ {0,3}(#{1,6})(?:[ \\t]+(.*?))?(?:[ \\t]+#+)?[ \\t]*$");
    private static final Pattern SETEXT_UNDERLINE = Pattern.compile("^ {0,3}(=+|-+)[ \\t]*$");
    private static final Pattern FENCE = Pattern.compile("^ {0,3}(`{3,}|~{3,})");
    private static final Pattern EXPLICIT_ANCHOR = Pattern.compile(
            "<a\\s(?:[^>]*\\s)?(?:id|name)\\s*=\\s*[\"']([^\"']+)[\"']", Pattern.CASE_INSENSITIVE);
    private static final Pattern PLAIN_REFERENCE = Pattern.compile(
            "(?<![\\w./\\\\-])((?:[\\w-][\\w.-]*/)*[\\w-][\\w.-]*\\.md)(#[\\w-]+)?(?![\\w-])");
    private static final Pattern CLIMB = Pattern.compile("(?<![\\w.-])((?:[\\w-][\\w.-]*/)*)((?:\\.\\./)+)");
    private static final Pattern OUTSIDE_PATH = Pattern.compile("\\.\\./shared|/wor" + "k/");

    private static Repository repo;

    @BeforeAll
    static void listTheRepository() {
        repo = Repository.find(Path.of("").toAbsolutePath(),
                Boolean.getBoolean("mstar.repository-checks.include-untracked"));
    }

    @Test
    void everyRelativeMarkdownLinkPointsAtAFileOfTheRepositoryAndAnExistingAnchor() {
        List<String> problems = new ArrayList<>();
        for (String file : repo.checkedFiles()) {
            if (!isMarkdown(file)) {
                continue;
            }
            Text text = repo.text(file);
            if (text == null) {
                continue;
            }
            for (Link link : links(text.content())) {
                String problem = checkLink(file, link.target());
                if (problem != null) {
                    problems.add(file + ":" + text.lineOf(link.offset()) + ": " + problem);
                }
            }
        }
        assertThat(problems).withFailMessage(() -> report("Markdown links that do not resolve", problems)).isEmpty();
    }

    @Test
    void everyPlainReferenceToAMarkdownFileResolvesWithItsAnchor() {
        List<String> problems = new ArrayList<>();
        for (String file : repo.checkedFiles()) {
            if (file.equals(SELF) || !PLAIN_REFERENCE_EXTENSIONS.contains(extension(file))) {
                continue;
            }
            Text text = repo.text(file);
            if (text == null) {
                continue;
            }
            // In Markdown, link targets are the other test's: resolved against the linking file, not the root.
            String content = isMarkdown(file) ? blankLinkTargets(text.content()) : text.content();
            Matcher m = PLAIN_REFERENCE.matcher(content);
            while (m.find()) {
                String problem = checkPlainReference(file, m.group(1), m.group(2));
                if (problem != null) {
                    problems.add(file + ":" + text.lineOf(m.start()) + ": " + problem);
                }
            }
        }
        assertThat(problems).withFailMessage(() -> report("References to Markdown files that do not resolve", problems))
                .isEmpty();
    }

    @Test
    void noTextFileNamesAPathOutsideTheRepository() {
        List<String> problems = new ArrayList<>();
        for (String file : repo.checkedFiles()) {
            if (file.equals(SELF)) {
                continue;
            }
            Text text = repo.text(file);
            if (text == null) {
                continue;
            }
            String content = text.content();
            Matcher outside = OUTSIDE_PATH.matcher(content);
            while (outside.find()) {
                problems.add(file + ":" + text.lineOf(outside.start()) + ": names a path outside the repository: "
                        + text.lineText(outside.start()));
            }
            int depth = Path.of(file).getNameCount() - 1;
            Matcher climb = CLIMB.matcher(content);
            while (climb.find()) {
                int down = climb.group(1).isEmpty() ? 0 : climb.group(1).split("/").length;
                int up = climb.group(2).length() / 3;
                if (depth + down - up < 0) {
                    problems.add(file + ":" + text.lineOf(climb.start()) + ": a relative path climbs above the root: "
                            + text.lineText(climb.start()));
                }
            }
        }
        assertThat(problems).withFailMessage(() -> report("Paths outside the repository", problems)).isEmpty();
    }

    @Test
    void noTextFileCitesAnOutsideDesignOrSaysHowTheProjectWasMade() {
        List<String> problems = new ArrayList<>();
        for (String file : repo.checkedFiles()) {
            if (file.equals(SELF)) {
                continue;
            }
            Text text = repo.text(file);
            if (text == null) {
                continue;
            }
            String[] lines = text.content().split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                if (!uncoveredFlags(file, lines[i]).isEmpty()) {
                    problems.add(file + ":" + (i + 1) + ": " + lines[i].strip());
                }
            }
        }
        assertThat(problems).withFailMessage(() -> report(
                "Lines citing a design outside the repository or describing how the project was made (allowed uses are "
                        + "listed in " + SELF + ")", problems)).isEmpty();
    }

    @Test
    void everyAllowedUseOfAFlaggedWordStillOccurs() {
        Set<String> unused = new LinkedHashSet<>();
        for (Allowed allowed : ALLOWED) {
            unused.add(allowed.name());
        }
        for (String file : repo.checkedFiles()) {
            if (file.equals(SELF) || unused.isEmpty()) {
                continue;
            }
            Text text = repo.text(file);
            if (text == null) {
                continue;
            }
            for (String line : text.content().split("\n", -1)) {
                if (!FLAGGED.matcher(line).find()) {
                    continue;
                }
                for (Allowed allowed : ALLOWED) {
                    if (allowed.appliesTo(file) && allowed.span().matcher(line).find()) {
                        unused.remove(allowed.name());
                    }
                }
            }
        }
        assertThat(unused).as("allow-list entries that match nothing any more; remove them to keep the list narrow")
                .isEmpty();
    }

    @Test
    void anchorsAreGitHubSlugsAndRepeatedHeadingsAreNumbered() {
        String page = String.join("\n",
                "# Architecture",
                "## A request's life",
                "### Tensors (`TensorLedger`)",
                "## KV memory: offload and reload",
                "```",
                "## not a heading",
                "```",
                "## Metrics",
                "## Metrics",
                "Setext heading",
                "--------------",
                "<a id=\"explicit-one\"></a>",
                "## [Linked](other.md) heading_with_underscore — dash");
        assertThat(anchors(page)).containsExactlyInAnyOrder("architecture", "a-requests-life", "tensors-tensorledger",
                "kv-memory-offload-and-reload", "metrics", "metrics-1", "setext-heading", "explicit-one",
                "linked-heading_with_underscore--dash");
    }

    // ---- links ------------------------------------------------------------------------------------------------

    private static String checkLink(String file, String rawTarget) {
        String target = rawTarget.startsWith("<") && rawTarget.endsWith(">")
                ? rawTarget.substring(1, rawTarget.length() - 1) : rawTarget;
        if (target.isEmpty()) {
            return "empty link target";
        }
        if (SCHEME.matcher(target).find() || target.startsWith("//")) {
            return null; // http(s):, mailto: and other schemes are not files of the repository
        }
        String anchor = null;
        int hash = target.indexOf('#');
        if (hash >= 0) {
            anchor = decode(target.substring(hash + 1));
            target = target.substring(0, hash);
        }
        int query = target.indexOf('?');
        if (query >= 0) {
            target = target.substring(0, query);
        }
        String resolved;
        if (target.isEmpty()) {
            resolved = file;
        } else {
            resolved = target.startsWith("/")
                    ? normalize(decode(target.substring(1)))
                    : normalize(parentOf(file) + decode(target));
            if (resolved == null) {
                return "'" + rawTarget + "' climbs above the repository root";
            }
            if (!repo.exists(resolved)) {
                return "'" + rawTarget + "': no file or folder " + resolved + " in the repository";
            }
        }
        return anchor == null ? null : checkAnchor(rawTarget, resolved, anchor);
    }

    private static String checkPlainReference(String file, String path, String anchorWithHash) {
        String resolved = null;
        if (!path.contains("/")) {
            String besideFile = normalize(parentOf(file) + path);
            if (besideFile != null && repo.exists(besideFile)) {
                resolved = besideFile;
            }
        }
        if (resolved == null) {
            resolved = normalize(path);
        }
        String shown = path + (anchorWithHash == null ? "" : anchorWithHash);
        if (resolved == null || !repo.isFile(resolved)) {
            return "'" + shown + "': no such file in the repository (paths are relative to its root)";
        }
        return anchorWithHash == null ? null : checkAnchor(shown, resolved, anchorWithHash.substring(1));
    }

    private static String checkAnchor(String shown, String resolved, String anchor) {
        if (!isMarkdown(resolved) || !repo.isFile(resolved)) {
            return null; // anchors of other files (source line links) are not ours to judge
        }
        Text target = repo.text(resolved);
        if (target == null || anchors(target.content()).contains(anchor)) {
            return null;
        }
        return "'" + shown + "': " + resolved + " has no heading or <a id> for #" + anchor;
    }

    /** Inline links, images and reference definitions, outside code blocks and code spans. */
    static List<Link> links(String markdown) {
        String prose = blankCodeSpans(blankFences(markdown));
        List<Link> links = new ArrayList<>();
        Matcher inline = INLINE_LINK.matcher(prose);
        while (inline.find()) {
            links.add(new Link(inline.group(1) == null ? "" : inline.group(1), inline.start()));
        }
        Matcher definition = REFERENCE_DEFINITION.matcher(prose);
        while (definition.find()) {
            links.add(new Link(definition.group(1), definition.start()));
        }
        return links;
    }

    /** The text with every link target blanked, so a plain-reference scan does not read them twice. */
    private static String blankLinkTargets(String markdown) {
        char[] chars = markdown.toCharArray();
        for (Matcher m = INLINE_LINK.matcher(markdown); m.find(); ) {
            if (m.group(1) != null) {
                Arrays.fill(chars, m.start(1), m.end(1), ' ');
            }
        }
        for (Matcher m = REFERENCE_DEFINITION.matcher(markdown); m.find(); ) {
            Arrays.fill(chars, m.start(1), m.end(1), ' ');
        }
        return new String(chars);
    }

    // ---- anchors ----------------------------------------------------------------------------------------------

    /** Every anchor a Markdown page defines: heading slugs (repeats numbered) and explicit {@code <a>} anchors. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new TreeSet<>();
        Map<String, Integer> seen = new HashMap<>();
        String[] lines = blankFences(markdown).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String heading = null;
            Matcher atx = ATX_HEADING.matcher(lines[i]);
            if (atx.matches()) {
                heading = atx.group(2) == null ? "" : atx.group(2);
            } else if (i + 1 < lines.length && SETEXT_UNDERLINE.matcher(lines[i + 1]).matches()
                    && isParagraphLine(lines[i])) {
                heading = lines[i].strip();
                i++;
            }
            if (heading != null) {
                String slug = slug(heading);
                int count = seen.merge(slug, 1, Integer::sum);
                anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
            }
        }
        Matcher explicit = EXPLICIT_ANCHOR.matcher(blankFences(markdown));
        while (explicit.find()) {
            anchors.add(explicit.group(1));
        }
        return anchors;
    }

    private static boolean isParagraphLine(String line) {
        String t = line.strip();
        return !t.isEmpty() && !t.startsWith("#") && !t.startsWith("|") && !t.startsWith(">") && !t.startsWith("<")
                && !t.matches("([-*+]|\\d+[.)])(\\s.*)?") && !SETEXT_UNDERLINE.matcher(line).matches();
    }

    /** GitHub's anchor for a heading: inline markup reduced to its text, then the character rule. */
    static String slug(String heading) {
        String text = heading
                .replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1") // a link or image counts by its text
                .replaceAll("<[^>]+>", ""); // HTML tags are not text
        StringBuilder slug = new StringBuilder();
        text.toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
            if (c == ' ') {
                slug.append('-');
            } else if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.appendCodePoint(c);
            }
        });
        return slug.toString();
    }

    // ---- flagged words ----------------------------------------------------------------------------------------

    /** The flagged words of {@code line} that no allowed span covers. */
    private static List<String> uncoveredFlags(String file, String line) {
        List<String> uncovered = new ArrayList<>();
        Matcher flag = FLAGGED.matcher(line);
        while (flag.find()) {
            boolean covered = false;
            for (Allowed allowed : ALLOWED) {
                if (!allowed.appliesTo(file)) {
                    continue;
                }
                Matcher span = allowed.span().matcher(line);
                while (span.find()) {
                    if (span.start() <= flag.start() && flag.end() <= span.end()) {
                        covered = true;
                        break;
                    }
                }
                if (covered) {
                    break;
                }
            }
            if (!covered) {
                uncovered.add(flag.group());
            }
        }
        return uncovered;
    }

    // ---- Markdown code ----------------------------------------------------------------------------------------

    /** Fenced code blocks replaced by spaces, line breaks kept, so offsets and line numbers stay the same. */
    static String blankFences(String markdown) {
        StringBuilder out = new StringBuilder(markdown.length());
        String fence = null;
        String[] lines = markdown.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (i > 0) {
                out.append('\n');
            }
            Matcher m = FENCE.matcher(line);
            if (fence == null && m.find()) {
                fence = m.group(1);
                out.append(" ".repeat(line.length()));
            } else if (fence != null) {
                String t = line.strip();
                char mark = fence.charAt(0);
                if (t.startsWith(fence) && t.chars().allMatch(c -> c == mark)) {
                    fence = null;
                }
                out.append(" ".repeat(line.length()));
            } else {
                out.append(line);
            }
        }
        return out.toString();
    }

    /** Code spans ({@code `x`}, {@code ``x``}) replaced by spaces. */
    static String blankCodeSpans(String markdown) {
        char[] chars = markdown.toCharArray();
        int i = 0;
        while (i < chars.length) {
            if (chars[i] != '`') {
                i++;
                continue;
            }
            int run = 0;
            while (i + run < chars.length && chars[i + run] == '`') {
                run++;
            }
            int close = findRun(chars, i + run, run);
            if (close < 0) {
                i += run;
                continue;
            }
            for (int k = i; k < close + run; k++) {
                if (chars[k] != '\n') {
                    chars[k] = ' ';
                }
            }
            i = close + run;
        }
        return new String(chars);
    }

    private static int findRun(char[] chars, int from, int length) {
        int i = from;
        while (i < chars.length) {
            if (chars[i] == '`') {
                int run = 0;
                while (i + run < chars.length && chars[i + run] == '`') {
                    run++;
                }
                if (run == length) {
                    return i;
                }
                i += run;
            } else {
                i++;
            }
        }
        return -1;
    }

    // ---- paths ------------------------------------------------------------------------------------------------

    private static boolean isMarkdown(String path) {
        return path.endsWith(".md") || path.endsWith(".markdown");
    }

    private static String extension(String path) {
        int slash = path.lastIndexOf('/');
        int dot = path.lastIndexOf('.');
        return dot > slash ? path.substring(dot) : "";
    }

    private static String parentOf(String file) {
        int slash = file.lastIndexOf('/');
        return slash < 0 ? "" : file.substring(0, slash + 1);
    }

    /** {@code a/./b/../c} as {@code a/c}, a trailing slash dropped; null when it climbs above the root. */
    static String normalize(String path) {
        List<String> parts = new ArrayList<>();
        for (String part : path.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                if (parts.isEmpty()) {
                    return null;
                }
                parts.remove(parts.size() - 1);
            } else {
                parts.add(part);
            }
        }
        return String.join("/", parts);
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }

    private static String report(String title, List<String> problems) {
        return title + " (" + problems.size() + "):\n  " + String.join("\n  ", problems);
    }

    // ---- the repository ---------------------------------------------------------------------------------------

    record Link(String target, int offset) {
    }

    /** A permitted use of a flagged word: in files whose path matches {@code path} (null: any), within {@code span}. */
    record Allowed(String name, Pattern path, Pattern span) {
        Allowed(String name, String path, String span) {
            this(name, path == null ? null : Pattern.compile(path), Pattern.compile(span));
        }

        boolean appliesTo(String file) {
            return path == null || path.matcher(file).find();
        }
    }
}
