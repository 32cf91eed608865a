package io.mstar.tensor.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.WrappedByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pin of one response body, released exactly once: when Netty releases the body buffer (its write
 * finished or failed: the channel's outbound buffer releases every message it is done with), or, if
 * the body was never handed to Netty, when the response is abandoned.
 *
 * <p>Why not release when the handler's publisher terminates: Reactor Netty may cancel that publisher
 * while the body is still queued in the channel (seen with a slow consumer: the pin went before a
 * 24 MiB body had left), and the producer would then free, and reuse, memory still being sent.
 */
final class PinnedBody {

    private static final int PINNED = 0;
    private static final int HANDED = 1;
    private static final int RELEASED = 2;

    private final AtomicInteger state = new AtomicInteger(PINNED);
    private final Runnable unpin;

    PinnedBody(Runnable unpin) {
        this.unpin = unpin;
    }

    /** The buffer to write; its last release unpins. Fails if the response was already abandoned. */
    ByteBuf buffer(ByteBuffer bytes) {
        if (!state.compareAndSet(PINNED, HANDED)) {
            throw new IllegalStateException("response abandoned before its body was written");
        }
        return new Releasing(Unpooled.wrappedBuffer(bytes));
    }

    /** The response ended; unpins unless the body buffer was handed over (its release unpins then). */
    void abandon() {
        if (state.compareAndSet(PINNED, RELEASED)) {
            unpin.run();
        }
    }

    private void released() {
        if (state.compareAndSet(HANDED, RELEASED)) {
            unpin.run();
        }
    }

    private final class Releasing extends WrappedByteBuf {
        Releasing(ByteBuf buf) {
            super(buf);
        }

        @Override
        public boolean release() {
            return last(super.release());
        }

        @Override
        public boolean release(int decrement) {
            return last(super.release(decrement));
        }

        private boolean last(boolean deallocated) {
            if (deallocated) {
                released();
            }
            return deallocated;
        }
    }
}
