package io.mstar.worker.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import io.mstar.wire.InputSignals;
import io.mstar.wire.TensorReceived;
import io.mstar.wire.WorkerMessage;

/**
 * How a tensor gets from one worker to another (docs/protocol.md, {@code InputSignals.inline_data}): the counter's
 * streamed tokens (8 bytes each, worker 1's step to worker 0's detok) travel inside their messages, so worker 0 reads
 * none and acknowledges none; with {@code inline-output-max-bytes} 0 every one is published, read and acknowledged,
 * and the outputs are the same. Bytes that do not match their descriptor fail that request alone. A prompt inside its
 * {@code NewRequest} ({@code NewRequest.inline_data}, as the conductor sends a small one) is not read either.
 */
class InlineTensorsTests {

    /** The reads worker 0 acknowledged to worker 1 (the conductor acknowledges its own reads of outputs too). */
    static long acknowledgedByWorker0(InProcessBroker broker) {
        synchronized (broker.sent) {
            return broker.sent.stream().filter(s -> s.from().equals("worker-0") && s.to().equals("worker-1"))
                    .map(s -> ((WorkerMessage) s.message()).body()).filter(TensorReceived.class::isInstance)
                    .mapToLong(r -> ((TensorReceived) r).successfulTensors().values().stream()
                            .mapToLong(Integer::longValue).sum())
                    .sum();
        }
    }

    @Nested
    class Inline extends CounterScenarios {

        @Test
        void streamedTokensTravelInsideTheirMessagesAndAreNeitherReadNorAcknowledged() throws Exception {
            maxTokensFive();
            List<InputSignals> toDetok = broker.sentTo(w0.id.value(), InputSignals.class).stream()
                    .filter(s -> !s.inputs().isEmpty()).toList();
            assertThat(toDetok).as("tokens streamed to worker 0").hasSize(5)
                    .allSatisfy(s -> assertThat(s.inlineData()).hasSize(1));
            assertThat(acknowledgedByWorker0(broker)).as("worker 0's reads acknowledged to worker 1").isZero();
        }

        @Test
        void aPromptInsideItsNewRequestIsNotRead() throws Exception {
            conductor.inlineInputs = true;
            CounterConductor.Run run = maxTokensFive();
            assertThat(run.failure).isNull();
            // worker 0's only tensors from elsewhere were the prompt and the streamed tokens, all inline
            assertThat(w0.registry.find("mstar.worker.tensor.transfer").timers()).as("worker 0's reads")
                    .allSatisfy(t -> assertThat(t.count()).isZero());
        }

        @Test
        void inlineBytesThatDoNotMatchTheirDescriptorFailThatRequestAlone() throws Exception {
            broker.rewrite(m -> m.body() instanceof InputSignals s && s.requestId().equals("r-bad") && s.inline()
                    ? WorkerMessage.of(new InputSignals(s.requestId(), s.inputs(), s.requestInfo(), s.partitionName(),
                            s.producerDone(), List.of(Base64.getEncoder().encodeToString(new byte[3]))))
                    : m);
            int[] tokens = {2, 5};
            conductor.start("r-bad", tokens, 5, null);
            conductor.start("r-good", tokens, 5, null);
            conductor.pumpUntilRemoved(TIMEOUT);

            assertThat(conductor.runs.get("r-bad").failure)
                    .contains("inline_data", "has 3 bytes; its descriptor says 8");
            assertPredicted(conductor.runs.get("r-good"), tokens, 5);
        } // everythingIsFreed: the copies stored before the bad one were released
    }

    @Nested
    class ReadThroughTheTransport extends CounterScenarios {

        @Override
        EngineProperties engineSettings() {
            return EngineProperties.defaults().withInlineOutputMaxBytes(0);
        }

        @Test
        void everyStreamedTokenIsReadAndAcknowledgedWithTheSameOutputs() throws Exception {
            maxTokensFive();
            List<InputSignals> toDetok = broker.sentTo(w0.id.value(), InputSignals.class).stream()
                    .filter(s -> !s.inputs().isEmpty()).toList();
            assertThat(toDetok).hasSize(5).allSatisfy(s -> assertThat(s.inline()).isFalse());
            assertThat(acknowledgedByWorker0(broker)).as("worker 0's reads acknowledged to worker 1").isEqualTo(5);
            assertThat(w0.registry.find("mstar.worker.tensor.transfer").timers().stream()
                    .mapToLong(t -> t.count()).sum()).as("worker 0's reads: the prompt's two and the five tokens")
                    .isEqualTo(7);
        }

        @Test
        void concurrentRequestsEachGetTheirOwnOutputs() throws Exception {
            for (int i = 0; i < 6; i++) {
                conductor.start("r-" + i, new int[] {i, i + 2}, 6, null);
            }
            conductor.pumpUntilRemoved(TIMEOUT);
            for (int i = 0; i < 6; i++) {
                assertPredicted(conductor.runs.get("r-" + i), new int[] {i, i + 2}, 6);
            }
        }
    }
}
