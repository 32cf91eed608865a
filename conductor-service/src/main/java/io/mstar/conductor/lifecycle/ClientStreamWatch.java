package io.mstar.conductor.lifecycle;

import java.util.concurrent.atomic.AtomicLong;

import io.mstar.conductor.output.Chunk;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * What the client's side of a request's chunk stream did: whether the HTTP response subscribed, how many chunks it
 * asked for and took, and whether it saw the end or cancelled. Written on the HTTP threads, read by the lifecycle
 * loop for views; a stream that stops can then be told apart: chunks the conductor handed out and nobody asked for
 * (the response stopped asking), or all taken (the rest was lost below the response).
 */
final class ClientStreamWatch {

    private final AtomicLong requested = new AtomicLong();
    private final AtomicLong taken = new AtomicLong();
    private volatile boolean subscribed;
    private volatile boolean completed;
    private volatile boolean cancelled;

    /** {@code chunks} as the client's response sees it, watched. */
    Flux<Chunk> watch(Flux<Chunk> chunks) {
        return chunks.doOnSubscribe(s -> subscribed = true)
                .doOnRequest(n -> requested.accumulateAndGet(n, Operators::addCap))
                .doOnNext(c -> taken.incrementAndGet())
                .doOnComplete(() -> completed = true)
                .doOnCancel(() -> cancelled = true);
    }

    RequestView.ClientStream snapshot() {
        long asked = requested.get();
        return new RequestView.ClientStream(subscribed, asked == Long.MAX_VALUE ? -1 : asked, taken.get(), completed,
                cancelled);
    }
}
