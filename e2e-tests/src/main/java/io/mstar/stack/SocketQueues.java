package io.mstar.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The kernel's view of the TCP connections to one local port ({@code /proc/net/tcp} and {@code tcp6}): per socket its
 * state and the bytes queued each way. A stalled stream whose client socket holds received bytes was delivered and
 * not read by the client; a server socket holding bytes to send was written and not taken by the client; neither
 * means the server never wrote them.
 */
final class SocketQueues {

    private static final List<String> STATES = List.of("?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1",
            "FIN_WAIT2", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING");

    private SocketQueues() {
    }

    /** One line per socket with {@code port} at either end; the server's sockets are those local to it. */
    static String of(int port) {
        StringBuilder out = new StringBuilder("local remote state send-queue receive-queue (bytes)\n");
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (IOException e) {
                out.append(table).append(": ").append(e).append('\n');
                continue;
            }
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 5) {
                    continue;
                }
                int local = port(f[1]);
                int remote = port(f[2]);
                if (local != port && remote != port) {
                    continue;
                }
                String[] queues = f[4].split(":");
                int state = Integer.parseInt(f[3], 16);
                out.append(String.format(Locale.ROOT, "%s %s %s %d %d%n", endpoint(f[1]), endpoint(f[2]),
                        state < STATES.size() ? STATES.get(state) : f[3], Long.parseLong(queues[0], 16),
                        Long.parseLong(queues[1], 16)));
            }
        }
        return out.toString();
    }

    private static int port(String hexAddress) {
        return Integer.parseInt(hexAddress.substring(hexAddress.indexOf(':') + 1), 16);
    }

    /** The address as the kernel writes it (hex, host byte order) and the port in decimal: enough to pair sockets. */
    private static String endpoint(String hexAddress) {
        return hexAddress.substring(0, hexAddress.indexOf(':')) + ":" + port(hexAddress);
    }
}
