package io.mstar.worker.tp;

import static io.mstar.worker.tp.RejoiningCollectiveTests.TIMEOUT;
import static io.mstar.worker.tp.RejoiningCollectiveTests.both;
import static io.mstar.worker.tp.RejoiningCollectiveTests.failureOf;
import static io.mstar.worker.tp.RejoiningCollectiveTests.gather;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.mstar.messaging.EntityId;
import io.mstar.tensor.collective.Collective;
import io.mstar.tensor.collective.CollectiveException;
import io.mstar.tensor.collective.SharedMemoryCollective;
import io.mstar.tensor.collective.SharedMemoryCollectiveSettings;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import io.mstar.wire.CollectiveBootstrap;
import io.mstar.wire.WireCodec;

/**
 * The NCCL unique-id hand-over of a GPU group (docs/tensor-parallelism.md#gpu-ranks), on two ranks as threads: rank 0
 * makes an id per communicator and sends it through the wire codec to the follower's {@link NcclBootstraps}, which
 * joins with the latest it has not joined with. NCCL needs a GPU per rank, so the communicator an id names is here a
 * shared-memory group whose file is named by the id; the NCCL join itself is {@code NcclCollectiveGpuTests}'.
 */
class NcclJoinTests {

    private static final String GROUP = "mstar.toy-tts.g1.i0";

    @TempDir
    Path dir;

    private final WireCodec codec = new WireCodec();
    private final NcclBootstraps followerInbox = new NcclBootstraps(Set.of(GROUP));
    private final List<CollectiveBootstrap> sent = new ArrayList<>();

    @Test
    void eachCommunicatorGetsAFreshIdThatTheFollowerJoinsOnce() throws Exception {
        try (HostDevice d0 = new HostDevice("gpu-0", 1 << 20); HostDevice d1 = new HostDevice("gpu-1", 1 << 20);
                RejoiningCollective r0 = rank(0, d0, new Random(Seeds.of("NcclJoinTests.ids")));
                RejoiningCollective r1 = rank(1, d1, null)) {
            assertThat(both(() -> gather(r0, d0, 10), () -> gather(r1, d1, 11))).isEqualTo(new long[] {10, 11});
            assertThat(sent).extracting(CollectiveBootstrap::generation).containsExactly(1L);

            r1.abort(); // the follower's communicator ends, and with it the group: rank 0's next call fails
            assertThatThrownBy(() -> gather(r0, d0, 12)).isInstanceOf(CollectiveException.class);

            assertThat(both(() -> gather(r0, d0, 20), () -> gather(r1, d1, 21))).as("a new communicator")
                    .isEqualTo(new long[] {20, 21});
            assertThat(sent).extracting(CollectiveBootstrap::generation).containsExactly(1L, 2L);
            assertThat(sent.get(1).ncclUniqueId()).isNotEqualTo(sent.get(0).ncclUniqueId());
            assertThat(r0.joins()).isEqualTo(2);
            assertThat(r1.joins()).isEqualTo(2);
        }
    }

    @Test
    void aFollowerWhoseLeaderSendsNothingFailsWithinTheBoundAndNeverRejoinsAnOldId() throws Exception {
        byte[] id = new byte[CollectiveBootstrap.NCCL_UNIQUE_ID_BYTES];
        followerInbox.offer(CollectiveBootstrap.of(GROUP, 7, id));
        assertThat(followerInbox.take(GROUP, 1, 2, TIMEOUT).generation()).isEqualTo(7);
        Duration bound = Duration.ofMillis(300);
        long start = System.nanoTime();
        assertThatThrownBy(() -> followerInbox.take(GROUP, 1, 2, bound))
                .isInstanceOfSatisfying(CollectiveException.class,
                        e -> assertThat(e.reason()).isEqualTo(CollectiveException.Reason.TIMEOUT))
                .hasMessageContaining("no NCCL unique id from rank 0 of " + GROUP);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(bound, bound.multipliedBy(10));

        byte[] restarted = id.clone();
        restarted[0] = 1;
        followerInbox.offer(CollectiveBootstrap.of(GROUP, 1, restarted)); // a restarted leader counts from 1 again
        assertThat(followerInbox.take(GROUP, 1, 2, TIMEOUT).uniqueId()).isEqualTo(restarted);
    }

    @Test
    void aBootstrapOfAGroupThisWorkerDoesNotFollowIsDropped() {
        followerInbox.offer(CollectiveBootstrap.of("mstar.toy-tts.g1.i1", 1, new byte[128]));
        assertThatThrownBy(() -> followerInbox.take("mstar.toy-tts.g1.i1", 1, 2, TIMEOUT))
                .isInstanceOfSatisfying(CollectiveException.class,
                        e -> assertThat(e.reason()).isEqualTo(CollectiveException.Reason.INVALID_ARGUMENT));
        assertThat(failureOf(() -> followerInbox.take(GROUP, 1, 2, Duration.ofMillis(50))))
                .isInstanceOf(CollectiveException.class).hasMessageContaining("within");
    }

    /** Rank 0 draws ids from {@code ids} and sends them; rank 1 takes them from the follower's inbox. */
    private RejoiningCollective rank(int rank, HostDevice device, Random ids) {
        NcclJoin.Communicators groups = new NcclJoin.Communicators() {
            @Override
            public byte[] uniqueId() {
                byte[] id = new byte[CollectiveBootstrap.NCCL_UNIQUE_ID_BYTES];
                ids.nextBytes(id);
                return id;
            }

            @Override
            public Collective join(int r, int size, byte[] id, Duration timeout) {
                Path file = dir.resolve("nccl-" + HexFormat.of().formatHex(id, 0, 8));
                return SharedMemoryCollective.join(new SharedMemoryCollectiveSettings(file, r, size,
                        SharedMemoryCollectiveSettings.DEFAULT_CAPACITY_BYTES / 16, timeout));
            }
        };
        NcclJoin join = new NcclJoin(GROUP, groups, rank, 2, TIMEOUT,
                rank == 0 ? List.of(EntityId.worker(2)) : List.of(), (worker, message) -> {
                    assertThat(worker).isEqualTo(EntityId.worker(2));
                    CollectiveBootstrap b = (CollectiveBootstrap) codec.decodeWorkerMessage(codec.encode(message))
                            .body();
                    sent.add(b);
                    followerInbox.offer(b);
                }, followerInbox);
        return new RejoiningCollective(rank, 2, join, device, "same", () -> { });
    }
}
