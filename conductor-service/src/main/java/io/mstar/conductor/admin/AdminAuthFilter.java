package io.mstar.conductor.admin;

import java.nio.charset.StandardCharsets;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.mstar.conductor.error.ErrorType;
import reactor.core.publisher.Mono;

/**
 * Bearer-token authentication of {@code /admin/**}: 503 {@code admin_disabled} without a configured token, 401
 * {@code unauthorized} without a bearer token, 403 {@code forbidden} for a wrong one. Every refusal is logged
 * (method, path, remote address; never the presented token).
 */
final class AdminAuthFilter implements WebFilter {

    private static final Logger log = LoggerFactory.getLogger("io.mstar.conductor.admin.audit");
    static final String PREFIX = "/admin/";
    private static final String BEARER = "Bearer ";

    private final AdminToken token;

    AdminAuthFilter(AdminToken token) {
        this.token = token;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        if (!path.startsWith(PREFIX) && !path.equals("/admin")) {
            return chain.filter(exchange);
        }
        if (!token.enabled()) {
            return refuse(exchange, ErrorType.ADMIN_DISABLED, "the admin API is disabled: " + token.whyDisabled());
        }
        String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return refuse(exchange, ErrorType.UNAUTHORIZED, "a bearer token is required");
        }
        if (!token.matches(header.substring(BEARER.length()).trim())) {
            return refuse(exchange, ErrorType.FORBIDDEN, "the bearer token is not the admin token");
        }
        return chain.filter(exchange);
    }

    private static Mono<Void> refuse(ServerWebExchange exchange, ErrorType type, String detail) {
        log.warn("admin {} {} from {} refused: {}", exchange.getRequest().getMethod(),
                exchange.getRequest().getPath().value(), exchange.getRequest().getRemoteAddress(), type.value());
        ServerHttpResponse response = exchange.getResponse();
        response.setRawStatusCode(type.status());
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        if (type == ErrorType.UNAUTHORIZED) {
            response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"mstar-admin\"");
        }
        String body = "{\"type\":\"" + type.typeUri() + "\",\"title\":\"" + type.title() + "\",\"status\":"
                + type.status() + ",\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "\\\"")
                + "\",\"error_type\":\"" + type.value() + "\"}";
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8))));
    }
}
