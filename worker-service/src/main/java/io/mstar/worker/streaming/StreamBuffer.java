package io.mstar.worker.streaming;

import io.mstar.loop.OwnerThread;
import io.mstar.tensor.LongKeys;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;

import static io.mstar.worker.streaming.StreamBufferException.Reason.CLOSED;
import static io.mstar.worker.streaming.StreamBufferException.Reason.DUPLICATE_LANDING;
import static io.mstar.worker.streaming.StreamBufferException.Reason.DUPLICATE_REGISTRATION;
import static io.mstar.worker.streaming.StreamBufferException.Reason.POLICY_VIOLATION;
import static io.mstar.worker.streaming.StreamBufferException.Reason.REGISTERED_AFTER_FINAL;
import static io.mstar.worker.streaming.StreamBufferException.Reason.UNKNOWN_UUID;

/**
 * The consumer side of one streaming edge of one request: tokens (one tensor each) arrive as a producer
 * partition emits them, and the consuming node reads them in chunks cut by a {@link ChunkPolicy}.
 *
 * <p>Order is fixed at {@link #register}, when the edge's descriptor arrives, not at {@link #landed}, when its
 * read completes: reads of one stream run concurrently and finish in any order, and a chunk is only cut from a
 * prefix of the stream that has wholly landed. So no token is delivered before every earlier-registered one,
 * whatever order the transport completes them in.
 *
 * <p>After {@link #producerDone()} and once every registered token has landed, the remainder is flushed and
 * exactly one chunk is marked final: the last full chunk when nothing is left after it, otherwise a short one,
 * or an empty one when everything was already delivered. Nothing is cut after it.
 *
 * <p>Handover: a landed tensor is owned by the buffer until a chunk's {@link StreamChunk#released()} or
 * {@link #close()} hands it back, exactly once each. Context tokens stay owned until no later chunk can need
 * them.
 *
 * <p>Owned by the engine loop: no threads of its own, not thread-safe, and every method fails loudly when
 * called from a thread other than the first one that used it.
 *
 * @param <T> the engine's tensor handle
 */
public final class StreamBuffer<T> {

    /** A registered token; {@code tensor} is null until it lands. */
    private static final class Slot<T> {
        final long position;
        final long uuid;
        T tensor;

        Slot(long position, long uuid) {
            this.position = position;
            this.uuid = uuid;
        }

        StreamEntry<T> entry() {
            return new StreamEntry<>(position, uuid, tensor);
        }
    }

    private final ChunkPolicy policy;
    private final OwnerThread owner = new OwnerThread("stream buffer");
    /** Slots of positions {@code [base, registered)}: everything before {@code base} was released. */
    private final List<Slot<T>> retained = new ArrayList<>();
    private final Long2ObjectHashMap<Slot<T>> unlanded = LongKeys.map();
    /** Every uuid ever registered, so a reused uuid is caught even after its first use was released. */
    private final LongHashSet seen = LongKeys.set();
    private long base;
    private long registered;
    /** Every position below this has landed. */
    private long contiguous;
    /** Tokens delivered as fresh; what {@code stream_tokens_consumed} reports. */
    private long delivered;
    private int chunksCut;
    private boolean producerDone;
    private boolean finalCut;
    private boolean closed;

    public StreamBuffer(ChunkPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    public ChunkPolicy policy() {
        return policy;
    }

    /**
     * Appends {@code uuid} to the stream; call in the order the streaming edges arrive. A registration after
     * {@link #producerDone()} is accepted while the final chunk is not cut yet: the producer's last edge and the
     * conductor's done signal come from different senders and may arrive in either order.
     */
    public void register(long uuid) {
        checkUsable(uuid);
        if (finalCut) {
            throw new StreamBufferException(REGISTERED_AFTER_FINAL, uuid,
                    "uuid " + uuid + " registered after the final chunk was cut");
        }
        if (!seen.add(uuid)) {
            throw new StreamBufferException(DUPLICATE_REGISTRATION, uuid, "uuid " + uuid + " registered twice");
        }
        Slot<T> slot = new Slot<>(registered++, uuid);
        retained.add(slot);
        unlanded.put(uuid, slot);
    }

    /** The read of {@code uuid} completed; the buffer owns {@code tensor} from now until it releases it. */
    public void landed(long uuid, T tensor) {
        checkUsable(uuid);
        Objects.requireNonNull(tensor, "tensor");
        Slot<T> slot = unlanded.remove(uuid);
        if (slot == null) {
            throw seen.contains(uuid)
                    ? new StreamBufferException(DUPLICATE_LANDING, uuid, "uuid " + uuid + " landed twice")
                    : new StreamBufferException(UNKNOWN_UUID, uuid, "uuid " + uuid + " was never registered");
        }
        slot.tensor = tensor;
        while (contiguous < registered && slotAt(contiguous).tensor != null) {
            contiguous++;
        }
    }

    /** The producer will register nothing more. Deliberately idempotent: a repeated signal changes nothing. */
    public void producerDone() {
        checkUsable(0);
        producerDone = true;
    }

    /** The next chunk when one is ready, else empty; empty forever once the final chunk has been cut. */
    public Optional<StreamChunk<T>> poll() {
        checkUsable(0);
        if (finalCut) {
            return Optional.empty();
        }
        int index = chunksCut;
        int want = policy.newTokens(index);
        int contextWanted = policy.contextTokens(index);
        if (want < 1 || contextWanted < 0) {
            throw new StreamBufferException(POLICY_VIOLATION, 0, policy + " asked for " + want
                    + " new and " + contextWanted + " context tokens for chunk " + index);
        }
        boolean allLanded = producerDone && contiguous == registered;
        long end;
        if (contiguous - delivered >= want) {
            end = delivered + want;
        } else if (allLanded) {
            end = registered;
        } else {
            return Optional.empty();
        }
        boolean isFinal = allLanded && end == registered;

        long start = end == delivered ? delivered : Math.max(base, delivered - contextWanted);
        List<StreamEntry<T>> context = entries(start, delivered);
        List<StreamEntry<T>> fresh = entries(delivered, end);

        long keepFrom = end;
        if (!isFinal) {
            int nextContext = policy.contextTokens(index + 1);
            if (nextContext < 0) {
                throw new StreamBufferException(POLICY_VIOLATION, 0, policy + " asked for " + nextContext
                        + " context tokens for chunk " + (index + 1));
            }
            keepFrom = Math.max(base, end - nextContext);
        }
        List<StreamEntry<T>> released = entries(base, keepFrom);
        // Ownership of the released entries passes to the caller with the chunk.
        retained.subList(0, (int) (keepFrom - base)).clear();
        base = keepFrom;

        delivered = end;
        chunksCut++;
        finalCut = isFinal;
        return Optional.of(new StreamChunk<>(index, start, context, fresh, isFinal, released));
    }

    /**
     * The request is removed: hands back every landed tensor still held and the uuids whose reads never landed,
     * and makes every later call fail. Closing twice is an error, as a double free is.
     */
    public StreamRelease<T> close() {
        checkUsable(0);
        closed = true;
        List<StreamEntry<T>> released = new ArrayList<>();
        List<Long> pending = new ArrayList<>();
        for (Slot<T> slot : retained) {
            if (slot.tensor != null) {
                released.add(slot.entry());
            } else {
                pending.add(slot.uuid);
            }
        }
        retained.clear();
        unlanded.clear();
        return new StreamRelease<>(released, pending);
    }

    /** Tokens delivered as fresh so far: {@code WorkerGraphsDone.stream_tokens_consumed} for this edge. */
    public long tokensConsumed() {
        return delivered;
    }

    public long tokensRegistered() {
        return registered;
    }

    /** Landed tensors the buffer holds now (not yet released). */
    public int heldTensors() {
        return retained.size() - unlanded.size();
    }

    /** Registered tokens whose reads have not landed: a chunk waits for the earliest of them. */
    public int tokensUnlanded() {
        return unlanded.size();
    }

    public int chunksCut() {
        return chunksCut;
    }

    public boolean isProducerDone() {
        return producerDone;
    }

    /** The final chunk has been cut. */
    public boolean isFinished() {
        return finalCut;
    }

    public boolean isClosed() {
        return closed;
    }

    private Slot<T> slotAt(long position) {
        return retained.get((int) (position - base));
    }

    private List<StreamEntry<T>> entries(long from, long to) {
        List<StreamEntry<T>> out = new ArrayList<>((int) (to - from));
        for (long p = from; p < to; p++) {
            out.add(slotAt(p).entry());
        }
        return out;
    }

    private void checkUsable(long uuid) {
        owner.check();
        if (closed) {
            throw new StreamBufferException(CLOSED, uuid, "stream buffer already closed");
        }
    }
}
