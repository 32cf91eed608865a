package io.mstar.wire;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import io.mstar.testing.Seeds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Seeded random mutations of the golden files (bytes flipped, inserted, deleted, JSON fragments
 * spliced in): a decoder either succeeds or throws {@link WireFormatException}, never anything
 * else; and whatever it accepts re-encodes to an equal message.
 */
class MutationTests {

    private static final int MUTATIONS_PER_FILE = 2000;
    private static final String[] FRAGMENTS = {
        "{", "}", "[", "]", ",", ":", "\"", "null", "true", "-", "1e999", "9223372036854775808", "0.5", "\\u0000",
        "\"x\"", "[[1,2]]", "{}", "[]", "\uD83D\uDE00", "\\", "//", "NaN",
    };

    private final WireCodec codec = new WireCodec();

    @Test
    void mutatedWorkerGoldensDecodeOrFailWithWireFormatExceptionOnly() {
        List<String> types = Arrays.stream(WorkerMessageType.values()).map(WorkerMessageType::value).toList();
        assertMutantsDecodeOrFailCleanly("worker", types, json -> {
            WorkerMessage m = codec.decodeWorkerMessage(json);
            assertThat(codec.decodeWorkerMessage(codec.encode(m))).isEqualTo(m);
        });
    }

    @Test
    void mutatedConductorGoldensDecodeOrFailWithWireFormatExceptionOnly() {
        List<String> types = Arrays.stream(ConductorMessageType.values()).map(ConductorMessageType::value).toList();
        assertMutantsDecodeOrFailCleanly("conductor", types, json -> {
            ConductorMessage m = codec.decodeConductorMessage(json);
            assertThat(codec.decodeConductorMessage(codec.encode(m))).isEqualTo(m);
        });
    }

    /**
     * Mutates each golden of {@code envelope} and feeds it to {@code decodeAndRoundTrip}, which decodes and checks
     * that an accepted mutant re-encodes to an equal message; anything it throws but a WireFormatException fails.
     */
    private static void assertMutantsDecodeOrFailCleanly(String envelope, List<String> types,
            Consumer<byte[]> decodeAndRoundTrip) {
        long seed = Seeds.of("MutationTests." + envelope);
        Random rnd = new Random(seed);
        int accepted = 0;
        for (String type : types) {
            byte[] golden = GoldenFileTests.golden(envelope, type);
            for (int i = 0; i < MUTATIONS_PER_FILE; i++) {
                byte[] mutated = mutate(golden, rnd);
                try {
                    decodeAndRoundTrip.accept(mutated);
                    accepted++;
                } catch (WireFormatException expected) {
                    assertThat(expected.jsonPath()).startsWith("$");
                    assertThat(expected.reason()).isNotNull();
                } catch (Throwable t) {
                    fail("seed " + seed + ", " + type + " mutation " + i + " threw " + t + " for "
                            + new String(mutated, StandardCharsets.UTF_8), t);
                }
            }
        }
        System.out.println("[mutation] " + envelope + ": " + accepted + " mutants accepted");
        assertThat(accepted).as("some mutants (e.g. whitespace, changed digits) must still decode").isPositive();
    }

    static byte[] mutate(byte[] input, Random rnd) {
        List<Byte> bytes = new ArrayList<>(input.length + 16);
        for (byte b : input) {
            bytes.add(b);
        }
        int edits = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 8 : 2);
        for (int e = 0; e < edits; e++) {
            int at = bytes.isEmpty() ? 0 : rnd.nextInt(bytes.size());
            switch (rnd.nextInt(6)) {
                case 0: // flip a bit
                    if (!bytes.isEmpty()) {
                        bytes.set(at, (byte) (bytes.get(at) ^ (1 << rnd.nextInt(8))));
                    }
                    break;
                case 1: // replace with a random byte
                    if (!bytes.isEmpty()) {
                        bytes.set(at, (byte) rnd.nextInt(256));
                    }
                    break;
                case 2: // delete a run
                    for (int k = rnd.nextInt(4); k >= 0 && at < bytes.size(); k--) {
                        bytes.remove(at);
                    }
                    break;
                case 3: // insert a random byte
                    bytes.add(at, (byte) rnd.nextInt(256));
                    break;
                case 4: // splice in a JSON fragment
                    byte[] f = FRAGMENTS[rnd.nextInt(FRAGMENTS.length)].getBytes(StandardCharsets.UTF_8);
                    for (int k = f.length - 1; k >= 0; k--) {
                        bytes.add(at, f[k]);
                    }
                    break;
                default: // change a digit (mostly yields a valid document)
                    for (int k = 0; k < bytes.size(); k++) {
                        int idx = (at + k) % bytes.size();
                        if (bytes.get(idx) >= '0' && bytes.get(idx) <= '9') {
                            bytes.set(idx, (byte) ('0' + rnd.nextInt(10)));
                            break;
                        }
                    }
            }
        }
        byte[] out = new byte[bytes.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = bytes.get(i);
        }
        return rnd.nextInt(50) == 0 ? Arrays.copyOf(out, rnd.nextInt(out.length + 1)) : out;
    }
}
