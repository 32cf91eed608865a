package io.mstar.worker.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.mstar.tensor.device.HostDevice;
import io.mstar.wire.OffloadDelta;

/**
 * Offload and reload of a {@link KvCache} on a real {@link HostDevice}, and its moves journal and replay
 * ({@link KvMoves}): each rule with a test that fails when the rule is broken.
 */
class KvOffloadTests {

    private static final long BYTES_PER_TOKEN = 8;

    private final HostDevice device = new HostDevice("host", 1 << 20);

    @AfterEach
    void deviceIsBackToBaseline() {
        assertThat(device.stats().bytesInUse()).as("device bytes after close").isZero();
        device.close();
    }

    /** Pages of 2 tokens: {@code pages} on the device, {@code hostPages} in the host pool. */
    private KvCache cache(int pages, int hostPages) {
        return new KvCache(device, new KvCacheLayout(2, pages, BYTES_PER_TOKEN), hostPages);
    }

    private void write(KvCache cache, String request, int position, long value) {
        device.copyFromHost(ByteBuffer.allocate(8).putLong(0, value), cache.pool(),
                cache.slot(request, position).byteOffset());
    }

    private long read(KvCache cache, String request, int position) {
        ByteBuffer out = ByteBuffer.allocate(8);
        device.copyToHost(cache.pool(), cache.slot(request, position).byteOffset(), out);
        return out.getLong(0);
    }

    private void holding(KvCache cache, String request, int tokens) {
        cache.addRequest(request);
        cache.appendTokens(request, tokens);
    }

    @Test
    void anOffloadedRequestComesBackOnOtherPagesWithExactlyItsBytes() {
        KvCache cache = cache(3, 4);
        holding(cache, "a", 3); // pages 0, 1
        for (int p = 0; p < 3; p++) {
            write(cache, "a", p, 1000 + p);
        }
        assertThat(cache.offload("a")).isTrue();
        assertThat(cache.isOffloaded("a")).isTrue();
        assertThat(cache.freePages()).isEqualTo(3);
        assertThat(cache.hostStats().pagesInUse()).isEqualTo(2);
        assertThatThrownBy(() -> cache.appendTokens("a", 1)).isInstanceOf(KvCacheException.class)
                .hasMessageContaining("reload");
        holding(cache, "b", 2); // takes page 1 or 0 meanwhile
        write(cache, "b", 0, 7);

        assertThat(cache.reload("a")).isTrue();

        for (int p = 0; p < 3; p++) {
            assertThat(read(cache, "a", p)).as("position %d", p).isEqualTo(1000 + p);
        }
        assertThat(read(cache, "b", 0)).isEqualTo(7);
        assertThat(cache.hostStats().pagesInUse()).isZero();
        assertThat(cache.tokenCount("a")).isEqualTo(3);
        cache.close();
    }

    @Test
    void movesAreAllOrNothingAndAReleaseFreesThePagesWhereverTheyAre() {
        KvCache cache = cache(3, 2);
        holding(cache, "a", 5); // 3 pages: more than the host pool holds
        assertThat(cache.offload("a")).as("host pool too small").isFalse();
        assertThat(cache.isOffloaded("a")).isFalse();
        assertThat(cache.hostStats().pagesInUse()).isZero();
        cache.releaseRequest("a");

        holding(cache, "b", 4); // 2 pages
        assertThat(cache.offload("b")).isTrue();
        holding(cache, "c", 6); // all 3 device pages
        assertThat(cache.reload("b")).as("no device room").isFalse();
        assertThat(cache.isOffloaded("b")).isTrue();
        assertThat(cache.stats().pagesInUse()).isEqualTo(3);

        assertThat(cache.releaseRequest("b")).isEqualTo(2);
        assertThat(cache.hostStats().pagesInUse()).as("host pages freed").isZero();
        assertThat(cache.hostStats().pagesFreed()).isEqualTo(2);
        cache.releaseRequest("c");
        assertThat(cache.stats().pagesInUse()).isZero();
        cache.close();
    }

    @Test
    void theJournalKeepsTheOrderAndATakeDrainsItOnce() {
        KvCache cache = cache(4, 4);
        KvMoves moves = new KvMoves(cache);
        holding(cache, "a", 2);
        assertThat(moves.offload("a")).isTrue();
        assertThat(moves.reload("a")).isTrue();
        assertThat(moves.offload("a")).isTrue();
        assertThat(moves.offload("a")).as("already offloaded: refused, not journalled").isFalse();

        OffloadDelta taken = moves.journal().take();
        assertThat(taken.moves()).containsExactly(new OffloadDelta.Move("a", true), new OffloadDelta.Move("a", false),
                new OffloadDelta.Move("a", true));
        assertThat(moves.journal().isEmpty()).isTrue();
        assertThat(moves.journal().take().isEmpty()).as("drained once").isTrue();

        // replayed on another rank's cache in order: A ends offloaded
        KvCache follower = cache(4, 4);
        KvMoves replayed = new KvMoves(follower);
        holding(follower, "a", 2);
        assertThat(replayed.replay(taken)).isEqualTo(3);
        assertThat(follower.isOffloaded("a")).isTrue();
        assertThat(taken.isEmpty()).isTrue();
        assertThat(replayed.journal().isEmpty()).as("a replay never journals onward").isTrue();
        cache.close();
        follower.close();
    }

    @Test
    void aMoveThatCannotBeMadeNowStaysQueuedAndTheRetryResumesAtIt() {
        KvCache cache = cache(4, 1);
        KvMoves moves = new KvMoves(cache);
        holding(cache, "a", 2);
        holding(cache, "b", 2);
        OffloadDelta delta = OffloadDelta.of(java.util.List.of(new OffloadDelta.Move("a", true),
                new OffloadDelta.Move("b", true), new OffloadDelta.Move("a", false)));

        assertThat(moves.replay(delta)).as("a offloaded, b refused: the host pool holds one page").isEqualTo(1);
        assertThat(delta.moves()).containsExactly(new OffloadDelta.Move("b", true), new OffloadDelta.Move("a", false));
        assertThat(cache.isOffloaded("b")).isFalse();

        cache.releaseRequest("a"); // frees the host page
        assertThat(moves.replay(delta)).as("b now; a's reload is moot, a is gone").isEqualTo(1);
        assertThat(cache.isOffloaded("b")).isTrue();
        assertThat(delta.isEmpty()).isTrue();
        cache.close();
    }

    @Test
    void mootMovesArePoppedWithoutChangingAnything() {
        KvCache cache = cache(4, 4);
        KvMoves moves = new KvMoves(cache);
        holding(cache, "resident", 2);
        cache.addRequest("empty");
        OffloadDelta delta = OffloadDelta.of(java.util.List.of(new OffloadDelta.Move("unknown", true),
                new OffloadDelta.Move("resident", false), new OffloadDelta.Move("empty", true)));

        assertThat(moves.replay(delta)).isZero();

        assertThat(delta.isEmpty()).isTrue();
        assertThat(cache.isOffloaded("resident")).isFalse();
        assertThat(cache.isOffloaded("empty")).isFalse();
        assertThat(cache.hostStats().pagesAllocated()).isZero();
        cache.close();
    }

    @Test
    void eachReplayWorksOnItsOwnCopy() {
        KvCache cache = cache(4, 4);
        holding(cache, "a", 2);
        OffloadDelta journal = OffloadDelta.of(java.util.List.of(new OffloadDelta.Move("a", true)));
        OffloadDelta copy = journal.copy();

        new KvMoves(cache).replay(copy);

        assertThat(copy.isEmpty()).isTrue();
        assertThat(journal.moves()).containsExactly(new OffloadDelta.Move("a", true));
        cache.close();
    }
}
