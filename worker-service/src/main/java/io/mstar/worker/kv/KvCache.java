package io.mstar.worker.kv;

import io.mstar.loop.OwnerThread;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.mstar.deployment.KvCacheConfig;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.device.DeviceBuffer;
import io.mstar.tensor.device.Transfer;
import io.mstar.worker.resident.ResidentSlots;

import static io.mstar.worker.kv.KvCacheException.Reason.CLOSED;
import static io.mstar.worker.kv.KvCacheException.Reason.DUPLICATE_REQUEST;
import static io.mstar.worker.kv.KvCacheException.Reason.INVALID_ARGUMENT;
import static io.mstar.worker.kv.KvCacheException.Reason.POSITION_OUT_OF_RANGE;
import static io.mstar.worker.kv.KvCacheException.Reason.UNKNOWN_REQUEST;

/**
 * The paged KV store of one autoregressive engine: one pool buffer on a {@link Device} cut into pages, a
 * {@link PageAllocator} over them, and each request's page list.
 *
 * <p>The pool is taken once, at construction, as a single allocation of
 * {@code max_num_pages * page_size * bytesPerToken}: the cache's memory is then fixed and known at load, and a
 * busy worker never competes with tensors for device memory mid-request. A request grows by whole pages as its
 * tokens are reserved; when the pool is exhausted only the request that asked fails (OUT_OF_PAGES) and keeps
 * what it had, so the engine fails that request and releases it while the others continue.
 *
 * <p>Owned by the engine loop: no threads of its own, not thread-safe, and every method but {@link #layout()}
 * fails loudly when called from a thread other than the first one that used it. It does not close the device
 * it was given; {@link #close()} frees the pool buffer and forgets every request.
 */
public final class KvCache implements AutoCloseable {

    /** Pages of one request: {@code pages[0..pageCount)} hold positions {@code [0, tokens)} in order. */
    private static final class PageList {
        int[] pages = new int[4];
        int pageCount;
        int tokens;
        /** Where its pages are while offloaded (one host page per device page it had); null while on the device. */
        int[] hostPages;
        /** The token ids fed at positions {@code [0, tokens)}, as the node's kernel reported them. */
        int[] fed = new int[16];
        /** Its pages were dropped ({@link #drop}): its KV is recomputed from {@code fed} when it next runs. */
        boolean dropped;

        int[] view() {
            return Arrays.copyOf(pages, pageCount);
        }
    }

    private final Device device;
    private final KvCacheLayout layout;
    private final PageAllocator allocator;
    private final ResidentSlots slots;
    private final Map<String, PageList> requests = new HashMap<>();
    private final OwnerThread owner = new OwnerThread("kv cache");
    private final HostPagePool host;
    private DeviceBuffer pool;

    /**
     * Takes the pool buffer from {@code device}; a {@link io.mstar.tensor.device.DeviceException} from that
     * allocation propagates (the engine cannot load).
     *
     * @param bytesPerToken every layer's K and V of one token, from the node's model geometry
     */
    public KvCache(Device device, KvCacheConfig config, long bytesPerToken) {
        this(device, KvCacheLayout.of(config, bytesPerToken));
    }

    public KvCache(Device device, KvCacheLayout layout) {
        this(device, layout, 0);
    }

    /** With {@code hostPages} pages of host memory to offload requests to ({@link #offload}). */
    public KvCache(Device device, KvCacheLayout layout, int hostPages) {
        this.device = Objects.requireNonNull(device, "device");
        this.layout = Objects.requireNonNull(layout, "layout");
        this.allocator = new PageAllocator(layout.maxNumPages());
        this.slots = new ResidentSlots(ResidentSlots.capacityFor(layout.maxNumPages()));
        this.host = HostPagePool.of(device, hostPages, layout.pageBytes());
        try {
            this.pool = device.allocate(layout.poolBytes());
        } catch (RuntimeException e) {
            host.close();
            throw e;
        }
    }

    /**
     * The request's slot in its node's resident tables (docs/resident-planning.md), leased now if it has none; null
     * when every slot is leased. A request gives its slot back when it is released or offloaded.
     */
    public ResidentSlots.Lease residentLease(String requestId) {
        PageList list = list(requestId);
        return list.hostPages != null ? null : slots.lease(requestId);
    }

    public KvCacheLayout layout() {
        return layout;
    }

    /** The pool buffer; slot offsets are relative to its start. */
    public DeviceBuffer pool() {
        checkOpen(null);
        return pool;
    }

    /** Starts a request with no tokens and no pages. */
    public void addRequest(String requestId) {
        checkOpen(requestId);
        if (requests.putIfAbsent(requestId, new PageList()) != null) {
            throw new KvCacheException(DUPLICATE_REQUEST, requestId, "request already has a page list");
        }
    }

    public boolean contains(String requestId) {
        checkOpen(requestId);
        return requests.containsKey(requestId);
    }

    /**
     * Reserves slots for {@code n} more tokens, taking pages as needed.
     *
     * @return the position of the first reserved token (the request's token count before the call)
     * @throws KvCacheException OUT_OF_PAGES when the pool cannot hold them: nothing changes for this request,
     *                          and nothing at all for the others
     */
    public int appendTokens(String requestId, int n) {
        PageList list = onDevice(requestId);
        if (n < 0) {
            throw new KvCacheException(INVALID_ARGUMENT, requestId, "cannot append " + n + " tokens");
        }
        int first = list.tokens;
        int needed = layout.pagesFor((long) first + n) - list.pageCount;
        if (needed > 0) {
            int[] fresh = allocator.allocate(needed, requestId);
            if (list.pages.length < list.pageCount + needed) {
                list.pages = Arrays.copyOf(list.pages, Math.max(list.pages.length * 2, list.pageCount + needed));
            }
            System.arraycopy(fresh, 0, list.pages, list.pageCount, needed);
            list.pageCount += needed;
        }
        list.tokens = first + n;
        list.dropped = false;
        return first;
    }

    /**
     * Takes back the positions from {@code tokens} on, freeing the pages they alone used: a speculated step whose
     * request stopped before it (docs/worker-runtime.md#speculation) leaves the request's pages exact.
     *
     * @return the pages freed
     */
    public int truncate(String requestId, int tokens) {
        PageList list = resident(requestId);
        if (tokens < 0 || tokens > list.tokens) {
            throw new KvCacheException(POSITION_OUT_OF_RANGE, requestId, "cannot truncate " + list.tokens
                    + " token(s) to " + tokens);
        }
        int keep = layout.pagesFor(tokens);
        int freed = list.pageCount - keep;
        if (freed > 0) {
            allocator.free(Arrays.copyOfRange(list.pages, keep, list.pageCount), requestId);
            list.pageCount = keep;
        }
        list.tokens = tokens;
        return freed;
    }

    /** Whether {@code n} more tokens fit in the pages the request holds already (a new request holds none). */
    public boolean fitsInHeldPages(String requestId, int n) {
        checkOpen(requestId);
        PageList list = requests.get(requestId);
        return list != null && list.hostPages == null && layout.pagesFor((long) list.tokens + n) <= list.pageCount;
    }

    /** Tokens reserved for the request. */
    public int tokenCount(String requestId) {
        return list(requestId).tokens;
    }

    /** The request's pages in position order (a copy): the page table a paged-attention kernel reads. */
    public int[] pages(String requestId) {
        return resident(requestId).view();
    }

    /** Where token {@code position} of the request lives. */
    public KvSlot slot(String requestId, int position) {
        PageList list = resident(requestId);
        if (position < 0 || position >= list.tokens) {
            throw new KvCacheException(POSITION_OUT_OF_RANGE, requestId, "position " + position
                    + " outside the " + list.tokens + " reserved token(s)");
        }
        int page = list.pages[position / layout.pageSize()];
        int slotInPage = position % layout.pageSize();
        return new KvSlot(position, page, slotInPage, layout.byteOffset(page, slotInPage));
    }

    /**
     * Frees every page of the request and forgets it; a second release is UNKNOWN_REQUEST, so a page is never
     * freed twice.
     *
     * @return the pages freed
     */
    public int releaseRequest(String requestId) {
        checkOpen(requestId);
        PageList list = requests.get(requestId);
        if (list == null) {
            throw new KvCacheException(UNKNOWN_REQUEST, requestId, "no page list (never added or released)");
        }
        if (list.hostPages != null) {
            host.free(list.hostPages, requestId);
        } else {
            allocator.free(list.view(), requestId);
        }
        requests.remove(requestId);
        slots.release(requestId);
        return list.pageCount;
    }

    /** The requests holding a page list now (a copy). */
    public Set<String> requestIds() {
        checkOpen(null);
        return Set.copyOf(requests.keySet());
    }

    public PageAllocatorStats stats() {
        checkOpen(null);
        return allocator.stats();
    }

    /** Releases every request's pages and frees the pool buffer; idempotent. */
    @Override
    public void close() {
        owner.check();
        if (pool == null) {
            return;
        }
        for (String requestId : Set.copyOf(requests.keySet())) {
            releaseRequest(requestId);
        }
        DeviceBuffer buffer = pool;
        pool = null;
        try {
            device.free(buffer);
        } finally {
            host.close();
        }
    }

    // ---------------------------------------------------------------- recompute

    /**
     * Records the token ids a step fed at positions {@code [first, first + tokens.length)}; positions a rollback took
     * back since are left out. What a dropped request is recomputed from.
     */
    public void recordFed(String requestId, int first, int[] tokens) {
        PageList list = list(requestId);
        int end = Math.min(list.tokens, first + tokens.length);
        if (first < 0 || end <= first) {
            return;
        }
        if (list.fed.length < end) {
            list.fed = Arrays.copyOf(list.fed, Math.max(list.fed.length * 2, end));
        }
        System.arraycopy(tokens, 0, list.fed, first, end - first);
    }

    /** The token ids fed at positions {@code [0, upTo)} (a copy). */
    public int[] fed(String requestId, int upTo) {
        PageList list = list(requestId);
        if (upTo < 0 || upTo > list.tokens) {
            throw new KvCacheException(POSITION_OUT_OF_RANGE, requestId, "fed tokens up to " + upTo + " of "
                    + list.tokens + " reserved");
        }
        return Arrays.copyOf(list.fed, upTo);
    }

    /**
     * Preemption by recompute: frees every device page of the request but keeps its positions and fed tokens, so its
     * next {@link #appendTokens} takes pages for all of them and its step feeds them again
     * ({@link #isDropped} until then). False, changing nothing, when it holds no device page.
     *
     * @return whether its pages were dropped
     */
    public boolean drop(String requestId) {
        PageList list = list(requestId);
        if (list.hostPages != null || list.pageCount == 0) {
            return false;
        }
        allocator.free(list.view(), requestId);
        list.pageCount = 0;
        list.dropped = true;
        slots.release(requestId);
        return true;
    }

    /** Whether the request's pages were dropped and its KV must be recomputed at its next step. */
    public boolean isDropped(String requestId) {
        return list(requestId).dropped;
    }

    // ---------------------------------------------------------------- offload and reload

    /** Whether the request's pages are in the host pool now. */
    public boolean isOffloaded(String requestId) {
        return list(requestId).hostPages != null;
    }

    /** Pages the request holds, on the device or offloaded. */
    public int pageCount(String requestId) {
        return list(requestId).pageCount;
    }

    /** Device pages free now. */
    public int freePages() {
        checkOpen(null);
        return allocator.freePages();
    }

    /** Device pages {@code n} more tokens of the request take: its own back when offloaded, and any new ones. */
    public int devicePagesNeeded(String requestId, int n) {
        PageList list = list(requestId);
        int total = layout.pagesFor((long) list.tokens + n);
        return list.hostPages != null ? total : total - list.pageCount;
    }

    /**
     * Moves the request's pages to the host pool: each page copied, then its device page freed. False, changing
     * nothing, when the request holds no device page or the host pool has not room for all of them.
     */
    public boolean offload(String requestId) {
        PageList list = list(requestId);
        if (list.hostPages != null || list.pageCount == 0 || host.freePages() < list.pageCount) {
            return false;
        }
        int[] taken = host.allocate(list.pageCount, requestId);
        try {
            List<Transfer> copies = new ArrayList<>(list.pageCount);
            for (int i = 0; i < list.pageCount; i++) {
                copies.add(new Transfer(pool, layout.byteOffset(list.pages[i], 0), host.page(taken[i])));
            }
            device.moveToHost(copies); // no running step touches a victim's pages: beside its work
        } catch (RuntimeException e) {
            host.free(taken, requestId);
            throw e;
        }
        allocator.free(list.view(), requestId);
        list.hostPages = taken;
        slots.release(requestId);
        return true;
    }

    /**
     * Brings an offloaded request's pages back, all or nothing: false, changing nothing, when the device has not
     * room for all of them. Its pages are new device pages, so a page table taken before is stale.
     */
    public boolean reload(String requestId) {
        PageList list = list(requestId);
        if (list.hostPages == null) {
            return false;
        }
        if (allocator.freePages() < list.pageCount) {
            return false;
        }
        int[] fresh = allocator.allocate(list.pageCount, requestId);
        try {
            List<Transfer> copies = new ArrayList<>(list.pageCount);
            for (int i = 0; i < list.pageCount; i++) {
                copies.add(new Transfer(pool, layout.byteOffset(fresh[i], 0), host.page(list.hostPages[i])));
            }
            device.moveFromHost(copies); // fresh pages: no running step touches them
        } catch (RuntimeException e) {
            allocator.free(fresh, requestId);
            throw e;
        }
        host.free(list.hostPages, requestId);
        list.hostPages = null;
        System.arraycopy(fresh, 0, list.pages, 0, fresh.length);
        return true;
    }

    /** The host pool's pages. */
    public PageAllocatorStats hostStats() {
        checkOpen(null);
        return host.stats();
    }

    /** A request whose pages are on the device, or were dropped (its next append takes them anew). */
    private PageList onDevice(String requestId) {
        PageList list = list(requestId);
        if (list.hostPages != null) {
            throw new KvCacheException(INVALID_ARGUMENT, requestId, "its pages are offloaded: reload it first");
        }
        return list;
    }

    private PageList resident(String requestId) {
        PageList list = onDevice(requestId);
        if (list.dropped) {
            throw new KvCacheException(INVALID_ARGUMENT, requestId, "its pages were dropped: append to recompute it");
        }
        return list;
    }

    private PageList list(String requestId) {
        checkOpen(requestId);
        PageList list = requests.get(requestId);
        if (list == null) {
            throw new KvCacheException(UNKNOWN_REQUEST, requestId, "no page list (never added or released)");
        }
        return list;
    }

    private void checkOpen(String requestId) {
        owner.check();
        if (pool == null) {
            throw new KvCacheException(CLOSED, requestId, "kv cache closed");
        }
    }
}
