package io.mstar.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Free TCP ports on 127.0.0.1 for one stack. A port is free when asked and bound by a child
 * process a moment later; the window is small and a collision shows up as a clear start-up
 * failure in that process's log, which beats fixed ports colliding with whatever else runs
 * here. Remembers what it handed out, so one stack never gets the same port twice.
 */
final class LoopbackPorts {

    private final Set<Integer> handedOut = new HashSet<>();

    /** {@code requested} when positive, else a free port not handed out before. */
    int orFree(int requested) {
        if (requested > 0) {
            handedOut.add(requested);
            return requested;
        }
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = bindAndRelease();
            if (handedOut.add(port)) {
                return port;
            }
        }
        throw new StackException("no free port on loopback after 100 attempts");
    }

    private static int bindAndRelease() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on loopback", e);
        }
    }
}
