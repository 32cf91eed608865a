package io.mstar.worker.streaming;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The chunks each policy cuts, and what each chunk hands back. Tokens are strings named after their uuid. */
class StreamBufferChunkingTests {

    private static List<Long> uuids(List<StreamEntry<String>> entries) {
        return entries.stream().map(StreamEntry::uuid).toList();
    }

    private static void registerAndLand(StreamBuffer<String> buffer, long from, long to) {
        for (long u = from; u < to; u++) {
            buffer.register(u);
            buffer.landed(u, "t" + u);
        }
    }

    private static StreamChunk<String> next(StreamBuffer<String> buffer) {
        return buffer.poll().orElseThrow(() -> new AssertionError("expected a chunk"));
    }

    @Test
    void fixedChunksWaitForEveryEarlierRegisteredTokenWhateverOrderReadsFinish() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new FixedChunkPolicy(2));
        for (long u = 10; u < 15; u++) {
            buffer.register(u);
        }
        buffer.landed(14, "t14");
        buffer.landed(11, "t11");
        buffer.landed(12, "t12");
        assertThat(buffer.poll()).as("token 10 has not landed").isEmpty();
        buffer.landed(10, "t10");

        StreamChunk<String> first = next(buffer);
        assertThat(uuids(first.fresh())).containsExactly(10L, 11L);
        assertThat(first.tensors()).containsExactly("t10", "t11");
        assertThat(first.context()).isEmpty();
        assertThat(uuids(first.released())).containsExactly(10L, 11L);
        assertThat(first.isFinal()).isFalse();
        assertThat(buffer.poll()).as("token 13 has not landed").isEmpty();
        assertThat(buffer.tokensConsumed()).isEqualTo(2);

        buffer.landed(13, "t13");
        StreamChunk<String> second = next(buffer);
        assertThat(uuids(second.fresh())).containsExactly(12L, 13L);
        assertThat(second.start()).isEqualTo(2);
        assertThat(buffer.poll()).as("one token left, producer not done").isEmpty();

        buffer.producerDone();
        StreamChunk<String> last = next(buffer);
        assertThat(uuids(last.fresh())).containsExactly(14L);
        assertThat(last.isFinal()).isTrue();
        assertThat(uuids(last.released())).containsExactly(14L);
        assertThat(buffer.poll()).isEmpty();
        assertThat(buffer.isFinished()).isTrue();
        assertThat(buffer.tokensConsumed()).isEqualTo(5);
        assertThat(buffer.heldTensors()).isZero();
    }

    @Test
    void lastFullChunkIsFinalWhenTheProducerIsAlreadyDone() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new FixedChunkPolicy(2));
        registerAndLand(buffer, 0, 4);
        buffer.producerDone();
        assertThat(next(buffer).isFinal()).isFalse();
        StreamChunk<String> last = next(buffer);
        assertThat(last.isFinal()).isTrue();
        assertThat(uuids(last.fresh())).containsExactly(2L, 3L);
        assertThat(buffer.poll()).as("never a second final chunk").isEmpty();
    }

    @Test
    void doneAfterEverythingWasDeliveredGivesOneEmptyFinalChunk() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new FixedChunkPolicy(2));
        registerAndLand(buffer, 0, 2);
        assertThat(next(buffer).isFinal()).isFalse();
        assertThat(buffer.poll()).isEmpty();
        buffer.producerDone();
        StreamChunk<String> last = next(buffer);
        assertThat(last.isFinal()).isTrue();
        assertThat(last.isEmpty()).isTrue();
        assertThat(last.released()).isEmpty();
        assertThat(last.start()).isEqualTo(2);
        assertThat(last.index()).isEqualTo(1);
        assertThat(buffer.poll()).isEmpty();
    }

    @Test
    void anEmptyStreamEndsWithOneEmptyFinalChunk() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new LeftContextChunkPolicy(3, 1));
        assertThat(buffer.poll()).isEmpty();
        buffer.producerDone();
        StreamChunk<String> only = next(buffer);
        assertThat(only.isFinal()).isTrue();
        assertThat(only.isEmpty()).isTrue();
        assertThat(buffer.poll()).isEmpty();
        assertThat(buffer.tokensConsumed()).isZero();
    }

    @Test
    void theFinalChunkWaitsForReadsStillInFlight() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new FixedChunkPolicy(4));
        buffer.register(1);
        buffer.register(2);
        buffer.landed(2, "t2");
        buffer.producerDone();
        assertThat(buffer.poll()).isEmpty();
        buffer.landed(1, "t1");
        StreamChunk<String> last = next(buffer);
        assertThat(last.isFinal()).isTrue();
        assertThat(uuids(last.fresh())).containsExactly(1L, 2L);
    }

    @Test
    void slidingWindowAdvancesByStrideAndKeepsTheOverlap() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new SlidingWindowChunkPolicy(4, 2));
        registerAndLand(buffer, 0, 7);

        StreamChunk<String> c0 = next(buffer);
        assertThat(c0.tensors()).containsExactly("t0", "t1", "t2", "t3");
        assertThat(uuids(c0.released())).as("0 and 1 fall out of the next window").containsExactly(0L, 1L);

        StreamChunk<String> c1 = next(buffer);
        assertThat(c1.tensors()).containsExactly("t2", "t3", "t4", "t5");
        assertThat(uuids(c1.context())).containsExactly(2L, 3L);
        assertThat(uuids(c1.fresh())).containsExactly(4L, 5L);
        assertThat(c1.start()).isEqualTo(2);
        assertThat(uuids(c1.released())).containsExactly(2L, 3L);
        assertThat(buffer.poll()).isEmpty();
        assertThat(buffer.heldTensors()).as("4, 5 kept as overlap, 6 waiting").isEqualTo(3);

        buffer.producerDone();
        StreamChunk<String> last = next(buffer);
        assertThat(last.tensors()).containsExactly("t4", "t5", "t6");
        assertThat(uuids(last.fresh())).containsExactly(6L);
        assertThat(last.isFinal()).isTrue();
        assertThat(uuids(last.released())).containsExactly(4L, 5L, 6L);
        assertThat(buffer.tokensConsumed()).isEqualTo(7);
    }

    @Test
    void leftContextKeepsContextTokensUntilNoLaterChunkNeedsThem() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new LeftContextChunkPolicy(3, 2));
        registerAndLand(buffer, 0, 9);

        StreamChunk<String> c0 = next(buffer);
        assertThat(c0.context()).isEmpty();
        assertThat(uuids(c0.fresh())).containsExactly(0L, 1L, 2L);
        assertThat(uuids(c0.released())).as("1 and 2 are the next chunk's context").containsExactly(0L);

        StreamChunk<String> c1 = next(buffer);
        assertThat(uuids(c1.context())).containsExactly(1L, 2L);
        assertThat(uuids(c1.fresh())).containsExactly(3L, 4L, 5L);
        assertThat(uuids(c1.released())).containsExactly(1L, 2L, 3L);

        StreamChunk<String> c2 = next(buffer);
        assertThat(uuids(c2.context())).containsExactly(4L, 5L);
        assertThat(uuids(c2.fresh())).containsExactly(6L, 7L, 8L);
        assertThat(c2.isFinal()).isFalse();
        assertThat(buffer.heldTensors()).isEqualTo(2);

        buffer.producerDone();
        StreamChunk<String> last = next(buffer);
        assertThat(last.isFinal()).isTrue();
        assertThat(last.isEmpty()).isTrue();
        assertThat(uuids(last.released())).as("the retained context goes with the final chunk")
                .containsExactly(7L, 8L);
        assertThat(buffer.heldTensors()).isZero();
    }

    @Test
    void contextLongerThanTheStreamSoFarCarriesWhatExists() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new LeftContextChunkPolicy(1, 3));
        registerAndLand(buffer, 0, 3);
        assertThat(next(buffer).context()).isEmpty();
        assertThat(uuids(next(buffer).context())).containsExactly(0L);
        StreamChunk<String> c2 = next(buffer);
        assertThat(uuids(c2.context())).containsExactly(0L, 1L);
        assertThat(c2.released()).as("chunk 3 wants three tokens of context").isEmpty();
    }

    @Test
    void aRegistrationAfterProducerDoneStillCountsUntilTheFinalChunk() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new FixedChunkPolicy(8));
        buffer.producerDone();
        registerAndLand(buffer, 0, 2);
        StreamChunk<String> last = next(buffer);
        assertThat(uuids(last.fresh())).containsExactly(0L, 1L);
        assertThat(last.isFinal()).isTrue();
        assertThatThrownBy(() -> buffer.register(5))
                .isInstanceOfSatisfying(StreamBufferException.class, e -> {
                    assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.REGISTERED_AFTER_FINAL);
                    assertThat(e.uuid()).isEqualTo(5);
                });
    }

    @Test
    void closeHandsBackHeldTensorsAndNamesReadsStillInFlight() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new LeftContextChunkPolicy(2, 1));
        for (long u = 0; u < 6; u++) {
            buffer.register(u);
        }
        buffer.landed(0, "t0");
        buffer.landed(1, "t1");
        buffer.landed(4, "t4");
        StreamChunk<String> c0 = next(buffer);
        assertThat(uuids(c0.released())).containsExactly(0L);

        StreamRelease<String> release = buffer.close();
        assertThat(uuids(release.released())).as("1 kept as context, 4 landed out of order")
                .containsExactly(1L, 4L);
        assertThat(release.released().get(1).tensor()).isEqualTo("t4");
        assertThat(release.unlanded()).containsExactly(2L, 3L, 5L);
        assertThat(buffer.isClosed()).isTrue();
        assertThatThrownBy(buffer::close).isInstanceOfSatisfying(StreamBufferException.class,
                e -> assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.CLOSED));
        assertThatThrownBy(() -> buffer.landed(2, "t2")).isInstanceOfSatisfying(StreamBufferException.class,
                e -> assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.CLOSED));
        assertThatThrownBy(buffer::poll).isInstanceOf(StreamBufferException.class);
    }

    @Test
    void misuseIsATypedErrorThatLeavesTheBufferUsable() {
        StreamBuffer<String> buffer = new StreamBuffer<>(new FixedChunkPolicy(1));
        buffer.register(7);
        assertThatThrownBy(() -> buffer.register(7)).isInstanceOfSatisfying(StreamBufferException.class,
                e -> assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.DUPLICATE_REGISTRATION));
        assertThatThrownBy(() -> buffer.landed(8, "t8")).isInstanceOfSatisfying(StreamBufferException.class,
                e -> assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.UNKNOWN_UUID));
        buffer.landed(7, "t7");
        assertThatThrownBy(() -> buffer.landed(7, "again")).isInstanceOfSatisfying(StreamBufferException.class,
                e -> assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.DUPLICATE_LANDING));
        assertThat(next(buffer).tensors()).containsExactly("t7");
        assertThatThrownBy(() -> buffer.register(7)).as("a reused uuid is caught after its release too")
                .isInstanceOfSatisfying(StreamBufferException.class,
                        e -> assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.DUPLICATE_REGISTRATION));
        assertThat(buffer.tokensRegistered()).isEqualTo(1);
    }

    @Test
    void aPolicyOutsideItsContractIsRejected() {
        ChunkPolicy broken = new ChunkPolicy() {
            @Override
            public int newTokens(int chunkIndex) {
                return 0;
            }

            @Override
            public int contextTokens(int chunkIndex) {
                return 0;
            }
        };
        StreamBuffer<String> buffer = new StreamBuffer<>(broken);
        assertThatThrownBy(buffer::poll).isInstanceOfSatisfying(StreamBufferException.class,
                e -> assertThat(e.reason()).isEqualTo(StreamBufferException.Reason.POLICY_VIOLATION));
    }

    @Test
    void policiesRejectShapesThatWouldLoseTokens() {
        assertThatThrownBy(() -> new SlidingWindowChunkPolicy(2, 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SlidingWindowChunkPolicy(2, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FixedChunkPolicy(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LeftContextChunkPolicy(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LeftContextChunkPolicy(1, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void onlyTheOwningThreadMayUseTheBuffer() throws InterruptedException, ExecutionException {
        StreamBuffer<String> buffer = new StreamBuffer<>(new FixedChunkPolicy(1));
        buffer.register(1);
        Throwable fromOther = CompletableFuture.supplyAsync(() -> {
            try {
                buffer.poll();
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        }).get();
        assertThat(fromOther).isInstanceOf(IllegalStateException.class).hasMessageContaining("owned by thread");
        buffer.landed(1, "t1");
        assertThat(next(buffer).tensors()).containsExactly("t1");
    }
}
