package io.mstar.worker.streaming;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import io.mstar.tensor.device.HostBuffer;
import io.mstar.tensor.device.HostDevice;
import io.mstar.testing.Seeds;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random streams, random landing orders, random policies, random early removal: every run checks order, no
 * loss, no duplicate, exactly one final chunk, and that every tensor is freed exactly once on a real
 * {@link HostDevice} (a second free throws there; a missing one leaves bytes in use). Replay a failure with
 * {@code -Dmstar.test.seed=<seed>}.
 */
class StreamBufferRandomizedTests {

    private static final int RUNS_PER_SEED = 200;

    @TestFactory
    Stream<DynamicTest> randomLandingOrdersKeepEveryStreamInvariant() {
        List<Long> seeds = Seeds.withFixed("StreamBufferRandomizedTests", 1L, 42L, 20261130L);
        return seeds.stream().map(seed -> DynamicTest.dynamicTest("seed " + seed, () -> {
            SplittableRandom random = new SplittableRandom(seed);
            HostDevice device = new HostDevice();
            try {
                for (int run = 0; run < RUNS_PER_SEED; run++) {
                    try {
                        new Run(random.split(), device).run();
                    } catch (AssertionError e) {
                        throw new AssertionError("replay with -Dmstar.test.seed=" + seed + ", run " + run + ": "
                                + e.getMessage(), e);
                    }
                }
                assertThat(device.stats().bytesInUse()).as("device bytes back to baseline").isZero();
                assertThat(device.stats().liveBuffers()).isZero();
            } finally {
                device.close();
            }
        }));
    }

    static ChunkPolicy randomPolicy(SplittableRandom random) {
        return switch (random.nextInt(3)) {
            case 0 -> new FixedChunkPolicy(1 + random.nextInt(5));
            case 1 -> {
                int window = 1 + random.nextInt(6);
                yield new SlidingWindowChunkPolicy(window, 1 + random.nextInt(window));
            }
            default -> new LeftContextChunkPolicy(1 + random.nextInt(5), random.nextInt(4));
        };
    }

    private static final class Run {
        private final SplittableRandom random;
        private final HostDevice device;
        private final ChunkPolicy policy;
        private final StreamBuffer<HostBuffer> buffer;
        private final int tokens;
        private final boolean removeEarly;
        private final List<Long> registeredOrder = new ArrayList<>();
        private final List<Long> inFlight = new ArrayList<>();
        private final Map<Long, HostBuffer> landedTensors = new HashMap<>();
        private final List<Long> deliveredOrder = new ArrayList<>();
        private final HashSet<Long> released = new HashSet<>();
        private int finals;
        private long nextUuid;

        Run(SplittableRandom random, HostDevice device) {
            this.random = random;
            this.device = device;
            this.policy = randomPolicy(random);
            this.buffer = new StreamBuffer<>(policy);
            this.tokens = random.nextInt(40);
            this.removeEarly = random.nextInt(5) == 0;
            this.nextUuid = 1000 + random.nextInt(1000);
        }

        void run() {
            int registered = 0;
            boolean done = false;
            int steps = 0;
            int removeAt = removeEarly ? random.nextInt(tokens * 3 + 2) : -1;
            while (true) {
                if (steps++ == removeAt) {
                    removeAndCheck();
                    return;
                }
                int action = random.nextInt(10);
                if (action < 3 && registered < tokens) {
                    long uuid = nextUuid;
                    nextUuid += 1 + random.nextInt(3);
                    buffer.register(uuid);
                    registeredOrder.add(uuid);
                    inFlight.add(uuid);
                    registered++;
                } else if (action < 6 && !inFlight.isEmpty()) {
                    land(inFlight.remove(random.nextInt(inFlight.size())));
                } else if (action == 6 && registered == tokens && !done) {
                    buffer.producerDone();
                    done = true;
                } else {
                    pollAll();
                }
                if (done && inFlight.isEmpty() && registered == tokens) {
                    pollAll();
                    break;
                }
            }
            assertThat(finals).as("exactly one final chunk (%s, %d tokens)", policy, tokens).isEqualTo(1);
            assertThat(deliveredOrder).as("every token once, in registration order").isEqualTo(registeredOrder);
            assertThat(buffer.tokensConsumed()).isEqualTo(tokens);
            assertThat(buffer.heldTensors()).isZero();
            assertThat(buffer.poll()).as("nothing after the final chunk").isEmpty();
            StreamRelease<HostBuffer> rest = buffer.close();
            assertThat(rest.released()).as("the final chunk released everything").isEmpty();
            assertThat(rest.unlanded()).isEmpty();
            assertThat(released).hasSize(tokens);
        }

        private void land(long uuid) {
            HostBuffer tensor = device.allocate(8);
            device.copyFromHost(ByteBuffer.allocate(8).putLong(0, uuid), tensor, 0);
            landedTensors.put(uuid, tensor);
            buffer.landed(uuid, tensor);
        }

        private void pollAll() {
            while (true) {
                var maybe = buffer.poll();
                if (maybe.isEmpty()) {
                    return;
                }
                check(maybe.get());
            }
        }

        private void check(StreamChunk<HostBuffer> chunk) {
            assertThat(finals).as("no chunk after the final one").isZero();
            int k = chunk.index();
            long delivered = deliveredOrder.size();
            assertThat(chunk.start()).isEqualTo(delivered - chunk.context().size());
            int expectedContext = chunk.fresh().isEmpty() ? 0 : (int) Math.min(policy.contextTokens(k), delivered);
            assertThat(chunk.context()).as("context of chunk %d under %s", k, policy).hasSize(expectedContext);
            if (!chunk.isFinal()) {
                assertThat(chunk.fresh()).hasSize(policy.newTokens(k));
            } else {
                assertThat(chunk.fresh().size()).isLessThanOrEqualTo(policy.newTokens(k));
                finals++;
            }
            for (int i = 0; i < chunk.context().size(); i++) {
                StreamEntry<HostBuffer> e = chunk.context().get(i);
                assertThat(e.uuid()).isEqualTo(registeredOrder.get((int) chunk.start() + i));
                assertThat(released).as("context %d was released earlier", e.uuid()).doesNotContain(e.uuid());
            }
            for (StreamEntry<HostBuffer> e : chunk.fresh()) {
                assertThat(e.position()).isEqualTo(deliveredOrder.size());
                assertThat(landedTensors).as("delivered before it landed").containsKey(e.uuid());
                assertThat(e.tensor()).isSameAs(landedTensors.get(e.uuid()));
                assertThat(e.tensor().bytes().getLong(0)).isEqualTo(e.uuid());
                deliveredOrder.add(e.uuid());
            }
            // The engine frees released tensors once the consumer is done with the chunk; here, right away.
            long lastNeeded = deliveredOrder.size() - (chunk.isFinal() ? 0 : policy.contextTokens(k + 1));
            for (StreamEntry<HostBuffer> e : chunk.released()) {
                assertThat(e.position()).as("released while a later chunk still needs it").isLessThan(lastNeeded);
                assertThat(released.add(e.uuid())).as("released twice: %d", e.uuid()).isTrue();
                device.free(e.tensor());
            }
            assertThat(buffer.tokensConsumed()).isEqualTo(deliveredOrder.size());
        }

        private void removeAndCheck() {
            StreamRelease<HostBuffer> rest = buffer.close();
            for (StreamEntry<HostBuffer> e : rest.released()) {
                assertThat(released.add(e.uuid())).as("released twice: %d", e.uuid()).isTrue();
                assertThat(e.tensor()).isSameAs(landedTensors.get(e.uuid()));
                device.free(e.tensor());
            }
            assertThat(rest.unlanded()).containsExactlyInAnyOrderElementsOf(inFlight);
            assertThat(released.size() + rest.unlanded().size())
                    .as("every registered uuid accounted for exactly once").isEqualTo(registeredOrder.size());
            assertThat(deliveredOrder).isEqualTo(registeredOrder.subList(0, deliveredOrder.size()));
        }
    }
}
