package io.mstar.worker.kernel.minilm;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * An independent BERT tokenizer written from the HuggingFace semantics (BertNormalizer with lower casing and accent
 * stripping, BertPreTokenizer, greedy longest-match WordPiece with "##", [CLS] ... [SEP], truncation to the limit
 * counting both), over the vocabulary of the model's own {@code tokenizer.json}: what the DJL ids are checked
 * against, so the encoder's inputs do not rest on the library alone.
 */
final class ReferenceWordPiece {

    private static final int MAX_CHARS_PER_WORD = 100;

    private final Map<String, Integer> vocab;

    private ReferenceWordPiece(Map<String, Integer> vocab) {
        this.vocab = vocab;
    }

    static ReferenceWordPiece fromClasspath() throws IOException {
        try (InputStream in = ReferenceWordPiece.class.getClassLoader()
                .getResourceAsStream(MiniLmWeights.TOKENIZER_RESOURCE)) {
            JsonObject json = JsonParser.parseReader(new InputStreamReader(in, StandardCharsets.UTF_8)).getAsJsonObject();
            JsonObject v = json.getAsJsonObject("model").getAsJsonObject("vocab");
            Map<String, Integer> vocab = new HashMap<>();
            for (Map.Entry<String, JsonElement> e : v.entrySet()) {
                vocab.put(e.getKey(), e.getValue().getAsInt());
            }
            return new ReferenceWordPiece(vocab);
        }
    }

    int id(String token) {
        Integer id = vocab.get(token);
        if (id == null) {
            throw new IllegalArgumentException("'" + token + "' is not in the vocabulary");
        }
        return id;
    }

    int[] encode(String text, int maxLength) {
        List<Integer> ids = new ArrayList<>();
        for (String word : preTokenize(normalize(text))) {
            ids.addAll(wordPiece(word));
        }
        int keep = Math.min(ids.size(), maxLength - 2);
        int[] out = new int[keep + 2];
        out[0] = id("[CLS]");
        for (int i = 0; i < keep; i++) {
            out[i + 1] = ids.get(i);
        }
        out[keep + 1] = id("[SEP]");
        return out;
    }

    static String normalize(String text) {
        StringBuilder cleaned = new StringBuilder();
        text.codePoints().forEach(c -> {
            if (c == 0 || c == 0xFFFD || isControl(c)) {
                return;
            }
            if (isWhitespace(c)) {
                cleaned.append(' ');
            } else if (isChinese(c)) {
                cleaned.append(' ').appendCodePoint(c).append(' ');
            } else {
                cleaned.appendCodePoint(c);
            }
        });
        String nfd = Normalizer.normalize(cleaned, Normalizer.Form.NFD);
        StringBuilder stripped = new StringBuilder();
        nfd.codePoints().filter(c -> Character.getType(c) != Character.NON_SPACING_MARK)
                .forEach(stripped::appendCodePoint);
        return stripped.toString().toLowerCase(java.util.Locale.ROOT);
    }

    static List<String> preTokenize(String text) {
        List<String> words = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        text.codePoints().forEach(c -> {
            if (isWhitespace(c)) {
                flush(current, words);
            } else if (isPunctuation(c)) {
                flush(current, words);
                words.add(new String(Character.toChars(c)));
            } else {
                current.appendCodePoint(c);
            }
        });
        flush(current, words);
        return words;
    }

    private List<Integer> wordPiece(String word) {
        int[] cps = word.codePoints().toArray();
        if (cps.length > MAX_CHARS_PER_WORD) {
            return List.of(id("[UNK]"));
        }
        List<Integer> pieces = new ArrayList<>();
        int start = 0;
        while (start < cps.length) {
            int end = cps.length;
            Integer found = null;
            while (end > start) {
                String sub = new String(cps, start, end - start);
                if (start > 0) {
                    sub = "##" + sub;
                }
                found = vocab.get(sub);
                if (found != null) {
                    break;
                }
                end--;
            }
            if (found == null) {
                return List.of(id("[UNK]"));
            }
            pieces.add(found);
            start = end;
        }
        return pieces;
    }

    private static void flush(StringBuilder current, List<String> words) {
        if (current.length() > 0) {
            words.add(current.toString());
            current.setLength(0);
        }
    }

    private static boolean isWhitespace(int c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || Character.getType(c) == Character.SPACE_SEPARATOR;
    }

    private static boolean isControl(int c) {
        if (c == '\t' || c == '\n' || c == '\r') {
            return false;
        }
        int t = Character.getType(c);
        return t == Character.CONTROL || t == Character.FORMAT || t == Character.SURROGATE
                || t == Character.PRIVATE_USE || t == Character.UNASSIGNED;
    }

    private static boolean isPunctuation(int c) {
        if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) {
            return true;
        }
        int t = Character.getType(c);
        return t == Character.CONNECTOR_PUNCTUATION || t == Character.DASH_PUNCTUATION
                || t == Character.END_PUNCTUATION || t == Character.FINAL_QUOTE_PUNCTUATION
                || t == Character.INITIAL_QUOTE_PUNCTUATION || t == Character.OTHER_PUNCTUATION
                || t == Character.START_PUNCTUATION;
    }

    private static boolean isChinese(int c) {
        return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF)
                || (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF)
                || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
    }
}
