package io.mstar.wire;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Jazzer fuzz tests of both decoders. In a normal build (no {@code JAZZER_FUZZ}) they run in
 * regression mode over the committed corpus under
 * {@code src/test/resources/io/mstar/wire/DecoderFuzzTestsInputs/<method>/}: the golden files and
 * the negative cases, one JUnit invocation per corpus file (surefire reports each; none skipped).
 *
 * <p>Checked with jazzer-junit 0.24.0 under JUnit 6 (Jupiter 6 API): regression mode runs every
 * corpus file as a test invocation, and fuzzing mode works too. To fuzz one decoder for a minute:
 * {@code JAZZER_FUZZ=1 mvn -pl shared-model test -Dtest='DecoderFuzzTests#workerDecoder*'}
 * (about 900k runs a minute on 2 cores found nothing). Generated inputs land in the git-ignored
 * {@code .cifuzz-corpus/}; copy a crashing one into the inputs directory to keep it as a
 * regression case.
 */
class DecoderFuzzTests {

    private static final WireCodec CODEC = new WireCodec();

    @FuzzTest(maxDuration = "60s")
    void workerDecoderThrowsOnlyWireFormatException(byte[] input) {
        try {
            WorkerMessage m = CODEC.decodeWorkerMessage(input);
            if (!CODEC.decodeWorkerMessage(CODEC.encode(m)).equals(m)) {
                throw new AssertionError("accepted input does not round-trip");
            }
        } catch (WireFormatException expected) {
            // the one failure decoders may report
        }
    }

    @FuzzTest(maxDuration = "60s")
    void conductorDecoderThrowsOnlyWireFormatException(byte[] input) {
        try {
            ConductorMessage m = CODEC.decodeConductorMessage(input);
            if (!CODEC.decodeConductorMessage(CODEC.encode(m)).equals(m)) {
                throw new AssertionError("accepted input does not round-trip");
            }
        } catch (WireFormatException expected) {
            // the one failure decoders may report
        }
    }
}
