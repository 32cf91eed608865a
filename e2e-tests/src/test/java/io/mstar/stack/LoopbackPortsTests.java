package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

class LoopbackPortsTests {

    @Test
    void freePortsComeFromBelowTheEphemeralRangeAreDistinctAndBindable() throws Exception {
        LoopbackPorts ports = new LoopbackPorts();
        assertThat(ports.highest()).isLessThan(LoopbackPorts.ephemeralLow());
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            int port = ports.orFree(0);
            assertThat(port).isBetween(LoopbackPorts.LOWEST, ports.highest());
            assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            }
        }
    }

    @Test
    void aRequestedPortIsKeptAndNeverHandedOutAgain() {
        LoopbackPorts ports = new LoopbackPorts();
        int requested = LoopbackPorts.LOWEST + 7;
        assertThat(ports.orFree(requested)).isEqualTo(requested);
        for (int i = 0; i < 500; i++) {
            assertThat(ports.orFree(0)).isNotEqualTo(requested);
        }
    }
}
