package io.mstar.conductor.openai;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.mstar.testing.Seeds;

class Utf8StreamTests {

    /** 1-, 2-, 3- and 4-byte characters (the last ones surrogate pairs in Java). */
    private static final String[] ALPHABET = {"a", "Z", " ", "\n", "é", "ß", "Ж", "€", "中", "한", "😀", "𝄞", "🇩🇪"};

    @Test
    void randomSplitsOfMultiByteTextDecodeToTheTextWithoutEverEmittingAHalfCharacter() {
        long seed = Seeds.of("Utf8StreamTests");
        Random random = new Random(seed);
        for (int round = 0; round < 500; round++) {
            StringBuilder text = new StringBuilder();
            int chars = random.nextInt(40);
            for (int i = 0; i < chars; i++) {
                text.append(ALPHABET[random.nextInt(ALPHABET.length)]);
            }
            byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
            Utf8Stream stream = new Utf8Stream();
            StringBuilder out = new StringBuilder();
            int at = 0;
            while (at < bytes.length) {
                // pieces of 0..5 bytes, the size of toy-tts chunks (one byte) and larger
                int n = Math.min(bytes.length - at, random.nextInt(6));
                String piece = stream.feed(Arrays.copyOfRange(bytes, at, at + n));
                at += n;
                assertThat(piece).as("seed %d round %d", seed, round).doesNotContain("\uFFFD");
                if (!piece.isEmpty()) {
                    assertThat(Character.isHighSurrogate(piece.charAt(piece.length() - 1))).isFalse();
                    assertThat(Character.isLowSurrogate(piece.charAt(0))).isFalse();
                }
                assertThat(stream.pendingBytes()).isBetween(0, 3);
                out.append(piece);
            }
            out.append(stream.finish());
            assertThat(out.toString()).as("seed %d round %d", seed, round).isEqualTo(text.toString());
        }
    }

    @Test
    void aFourByteCharacterFedOneByteAtATimeAppearsOnlyWithItsLastByte() {
        byte[] bytes = "😀".getBytes(StandardCharsets.UTF_8);
        Utf8Stream stream = new Utf8Stream();
        assertThat(stream.feed(new byte[] {bytes[0]})).isEmpty();
        assertThat(stream.feed(new byte[] {bytes[1]})).isEmpty();
        assertThat(stream.feed(new byte[] {bytes[2]})).isEmpty();
        assertThat(stream.pendingBytes()).isEqualTo(3);
        assertThat(stream.feed(new byte[] {bytes[3]})).isEqualTo("😀");
        assertThat(stream.pendingBytes()).isZero();
        assertThat(stream.finish()).isEmpty();
    }

    @Test
    void malformedBytesBecomeReplacementCharactersAsAWholeDecodeWould() {
        byte[][] cases = {
            {(byte) 0xff, 'a'},
            {'a', (byte) 0x80, 'b'},
            {(byte) 0xe2, (byte) 0x82, 'x'},
            {(byte) 0xc0, (byte) 0xaf},
            {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
        };
        for (byte[] bytes : cases) {
            Utf8Stream stream = new Utf8Stream();
            StringBuilder out = new StringBuilder();
            for (byte b : bytes) {
                out.append(stream.feed(new byte[] {b}));
            }
            out.append(stream.finish());
            assertThat(out.toString()).as(Arrays.toString(bytes)).isEqualTo(new String(bytes, StandardCharsets.UTF_8));
        }
    }

    @Test
    void aSequenceCutOffAtTheEndIsOneReplacementCharacter() {
        Utf8Stream stream = new Utf8Stream();
        assertThat(stream.feed(new byte[] {'o', 'k', (byte) 0xe2, (byte) 0x82})).isEqualTo("ok");
        assertThat(stream.finish()).isEqualTo("\uFFFD");
    }
}
