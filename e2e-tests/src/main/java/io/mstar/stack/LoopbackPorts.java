package io.mstar.stack;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Free TCP ports on 127.0.0.1 for one stack. A port is free when asked and bound by a child process a moment later.
 * Ports come from below the kernel's ephemeral range: a port the kernel hands out for bind-to-0 is one it also hands
 * to outgoing connections, and with the stack's Kafka clients connecting while it starts, one of them took a port
 * between the check and the child's bind ("Port … was already in use"). Below that range only another listener can
 * take it, and the check sees existing ones. Remembers what it handed out, so one stack never gets the same port twice.
 */
final class LoopbackPorts {

    /** Lowest port handed out: clear of the well-known and the commonly configured service ports. */
    static final int LOWEST = 10_000;
    /** Linux's default ephemeral range starts here; other systems start theirs higher still (IANA: 49152). */
    private static final int DEFAULT_EPHEMERAL_LOW = 32_768;
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    private final Set<Integer> handedOut = new HashSet<>();
    private final SplittableRandom random = new SplittableRandom();
    private final int highest = ephemeralLow() - 1;

    /** {@code requested} when positive, else a free port not handed out before. */
    int orFree(int requested) {
        if (requested > 0) {
            handedOut.add(requested);
            return requested;
        }
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = random.nextInt(LOWEST, highest + 1);
            if (!handedOut.contains(port) && bindable(port)) {
                handedOut.add(port);
                return port;
            }
        }
        throw new StackException("no free port on loopback in " + LOWEST + ".." + highest + " after 200 attempts");
    }

    /** The first port of the ephemeral range; ports are handed out below it. */
    int highest() {
        return highest;
    }

    static int ephemeralLow() {
        try {
            String[] range = Files.readString(EPHEMERAL_RANGE).trim().split("\\s+");
            int low = Integer.parseInt(range[0]);
            return low > LOWEST + 1_000 ? low : DEFAULT_EPHEMERAL_LOW;
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_LOW; // not Linux, or an unreadable range: Linux's default is the lowest in use
        }
    }

    /** Whether a listener could bind 127.0.0.1:{@code port} right now. */
    static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
