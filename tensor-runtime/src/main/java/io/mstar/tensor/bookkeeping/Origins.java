package io.mstar.tensor.bookkeeping;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The fields constant across one node's output batch (session, entity, node, walk, tp size and rank), interned as an
 * origin id shared by the batch's entries in {@link FastTensorBookkeeping} and counted by use, so that the origins of
 * walks that end go again. Owned like its bookkeeper.
 */
final class Origins {

    record Origin(String sessionId, String entity, String nodeName, String graphWalk, int tpSize, int tpRank) {
    }

    private final Map<Origin, Integer> ids = new HashMap<>();
    private Origin[] origins = new Origin[16];
    private int[] uses = new int[16];
    private int high;
    private int[] free = new int[16];
    private int freeTop;
    /** The origin interned last: a batch's rows, and the next batch of the same node, ask for it again. */
    private int last = -1;

    /** The id of this origin, interned with no uses on first sight; the caller counts its uses with {@link #use}. */
    int intern(String sessionId, String entity, String nodeName, String walk, int tpSize, int tpRank) {
        if (last >= 0) {
            Origin o = origins[last];
            if (o.tpSize == tpSize && o.tpRank == tpRank && o.sessionId.equals(sessionId) && o.entity.equals(entity)
                    && Objects.equals(o.nodeName, nodeName) && Objects.equals(o.graphWalk, walk)) {
                return last;
            }
        }
        Origin key = new Origin(sessionId, entity, nodeName, walk, tpSize, tpRank);
        Integer id = ids.get(key);
        if (id == null) {
            int o;
            if (freeTop > 0) {
                o = free[--freeTop];
            } else {
                if (high == origins.length) {
                    origins = Arrays.copyOf(origins, high * 2);
                    uses = Arrays.copyOf(uses, high * 2);
                    free = Arrays.copyOf(free, high * 2);
                }
                o = high++;
            }
            origins[o] = key;
            uses[o] = 0;
            ids.put(key, o);
            id = o;
        }
        last = id;
        return id;
    }

    void use(int o, int n) {
        uses[o] += n;
    }

    /** Takes {@code n} uses off origin {@code o}, which goes with its last. */
    void release(int o, int n) {
        if ((uses[o] -= n) == 0) {
            ids.remove(origins[o]);
            origins[o] = null;
            free[freeTop++] = o;
            if (last == o) {
                last = -1;
            }
        }
    }

    Origin get(int o) {
        return origins[o];
    }

    /** Origins interned now. */
    int size() {
        return ids.size();
    }
}
