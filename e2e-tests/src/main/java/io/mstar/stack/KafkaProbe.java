package io.mstar.stack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Asks a broker to describe its cluster: a TCP connect would succeed while the broker is still
 * recovering its metadata log, describeCluster only once it serves requests.
 */
final class KafkaProbe {

    private KafkaProbe() {
    }

    static boolean answers(String bootstrapServers, Duration timeout) {
        // A refused connect is the common case while the broker starts; checking it first keeps
        // the admin client's "could not be established" warnings out of every log.
        if (!acceptsConnections(bootstrapServers, timeout)) {
            return false;
        }
        int millis = (int) timeout.toMillis();
        Map<String, Object> config = Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.CLIENT_ID_CONFIG, "mstar-stack-probe",
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, millis,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, millis,
                // One attempt per probe: the caller's loop is the retry.
                AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200);
        Admin admin = Admin.create(config);
        try {
            return !admin.describeCluster().nodes().get(millis, TimeUnit.MILLISECONDS).isEmpty();
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            // The no-argument close waits without bound for a call still in flight.
            admin.close(Duration.ofSeconds(1));
        }
    }

    private static boolean acceptsConnections(String bootstrapServers, Duration timeout) {
        String first = bootstrapServers.split(",")[0];
        int colon = first.lastIndexOf(':');
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(first.substring(0, colon),
                    Integer.parseInt(first.substring(colon + 1))), (int) timeout.toMillis());
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
