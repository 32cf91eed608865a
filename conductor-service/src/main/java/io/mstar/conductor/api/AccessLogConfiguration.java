package io.mstar.conductor.api;

import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.netty.http.server.logging.AccessLog;
import reactor.netty.http.server.logging.AccessLogArgProvider;
import reactor.netty.http.server.logging.AccessLogFactory;

/**
 * The HTTP server's access log (logger {@code reactor.netty.http.server.AccessLog}): one line when a response's last
 * byte was written to its connection ({@code /actuator} excepted), with the request id the conductor answered in
 * {@code Mstar-Request-Id}. A streamed response the client left early never finishes, so it has no line; a request
 * whose line is there while its client still waits lost the rest after the conductor wrote it
 * (docs/operability.md#a-request-that-does-not-move).
 */
@Configuration(proxyBeanMethods = false)
class AccessLogConfiguration {

    private static final String FORMAT = "{} {} {} bytes={} duration_ms={} request_id={} remote={}";

    @Bean
    NettyServerCustomizer accessLog(ApiProperties properties) {
        // probes and scrapes hit /actuator every few seconds: lines about them would bury the requests'
        AccessLogFactory lines = AccessLogFactory.createFilter(a -> !a.uri().toString().startsWith("/actuator"),
                AccessLogConfiguration::line);
        return server -> server.accessLog(properties.accessLog(), lines);
    }

    private static AccessLog line(AccessLogArgProvider a) {
        CharSequence id = a.responseHeader(ApiHeaders.REQUEST_ID);
        return AccessLog.create(FORMAT, a.method(), a.uri(), a.status(), a.contentLength(), a.duration(),
                id == null ? "-" : id, a.remoteAddress());
    }
}
