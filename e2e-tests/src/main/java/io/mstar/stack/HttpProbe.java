package io.mstar.stack;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * Plain GETs against a service's actuator. HttpURLConnection rather than HttpClient: it starts
 * no selector thread that would outlive a short CLI run.
 */
public final class HttpProbe {

    private HttpProbe() {
    }

    /** The response's status code, or -1 when nothing answered within {@code timeout}. */
    public static int status(String url, Duration timeout) {
        try {
            HttpURLConnection connection = open(url, timeout);
            try {
                int code = connection.getResponseCode();
                drain(code < 400 ? connection.getInputStream() : connection.getErrorStream());
                return code;
            } finally {
                connection.disconnect();
            }
        } catch (IOException e) {
            return -1;
        }
    }

    /** The body of a 200 response; a {@link StackException} naming the URL otherwise. */
    public static String body(String url, Duration timeout) {
        return body(url, timeout, Map.of());
    }

    /** As {@link #body(String, Duration)}, with request headers (an admin bearer token, say). */
    public static String body(String url, Duration timeout, Map<String, String> headers) {
        try {
            HttpURLConnection connection = open(url, timeout);
            headers.forEach(connection::setRequestProperty);
            try {
                int code = connection.getResponseCode();
                if (code != 200) {
                    throw new StackException("GET " + url + " answered " + code);
                }
                try (InputStream in = connection.getInputStream()) {
                    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
            } finally {
                connection.disconnect();
            }
        } catch (IOException e) {
            throw new StackException("GET " + url + " failed: " + e.getMessage(), e);
        }
    }

    private static HttpURLConnection open(String url, Duration timeout) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) URI.create(url).toURL().openConnection();
        connection.setConnectTimeout((int) timeout.toMillis());
        connection.setReadTimeout((int) timeout.toMillis());
        connection.setUseCaches(false);
        return connection;
    }

    private static void drain(InputStream in) throws IOException {
        if (in != null) {
            try (in) {
                in.readAllBytes();
            }
        }
    }
}
