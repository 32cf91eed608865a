package io.mstar.worker.kv;

import java.util.Optional;

import io.mstar.wire.OffloadDelta;

/**
 * A KV cache's moves between the device and its host pool (docs/streaming-and-kv.md#the-moves-journal): each offload
 * and reload this worker decides is made and appended, in order, to its {@link OffloadDelta} of wire request ids; a
 * journal from another rank (a tensor-parallel leader's) is {@link #replay}ed by the reference system's rules. Owned by
 * the engine loop.
 */
public final class KvMoves {

    private final KvCache cache;
    private final OffloadDelta journal = OffloadDelta.newDelta();
    private long offloads;
    private long reloads;

    public KvMoves(KvCache cache) {
        this.cache = cache;
    }

    /** Offloads {@code requestId} and journals it; false (nothing journalled) when the cache refused. */
    public boolean offload(String requestId) {
        if (!cache.offload(requestId)) {
            return false;
        }
        journal.addOffloaded(requestId);
        offloads++;
        return true;
    }

    /** Reloads {@code requestId} and journals it; false (nothing journalled) when its pages do not fit now. */
    public boolean reload(String requestId) {
        if (!cache.reload(requestId)) {
            return false;
        }
        journal.addReloaded(requestId);
        reloads++;
        return true;
    }

    /** The journal itself: {@link OffloadDelta#take()} hands its moves over and empties it. */
    public OffloadDelta journal() {
        return journal;
    }

    /**
     * Applies {@code delta}'s moves in order, popping each one applied or moot: a move for a request this cache does
     * not hold, one that already matches, or an offload of a request holding no page. A move that cannot be made now
     * (no host room to offload, no device room to reload) stops the replay and stays queued for the next one. Replayed
     * moves are not journalled again.
     *
     * @return the moves applied
     */
    public int replay(OffloadDelta delta) {
        int applied = 0;
        for (Optional<OffloadDelta.Move> head = delta.peekLeft(); head.isPresent(); head = delta.peekLeft()) {
            OffloadDelta.Move move = head.get();
            String id = move.rid();
            if (!cache.contains(id) || cache.isOffloaded(id) == move.offload()
                    || move.offload() && cache.pageCount(id) == 0) {
                delta.popLeft();
                continue;
            }
            boolean done = move.offload() ? cache.offload(id) : cache.reload(id);
            if (!done) {
                break;
            }
            if (move.offload()) {
                offloads++;
            } else {
                reloads++;
            }
            delta.popLeft();
            applied++;
        }
        return applied;
    }

    /** Offloads made or replayed since start. */
    public long offloads() {
        return offloads;
    }

    /** Reloads made or replayed since start. */
    public long reloads() {
        return reloads;
    }
}
