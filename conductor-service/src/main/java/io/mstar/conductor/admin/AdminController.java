package io.mstar.conductor.admin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.lifecycle.AbortReason;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestLifecycle;
import io.mstar.conductor.lifecycle.RequestState;
import io.mstar.conductor.lifecycle.RequestView;
import reactor.core.publisher.Mono;

/** The admin API (docs/architecture.md#admin-api); authenticated by {@link AdminAuthFilter}; every action is logged. */
@RestController
class AdminController {

    private static final Logger audit = LoggerFactory.getLogger("io.mstar.conductor.admin.audit");

    private final LifecycleLoop loop;

    AdminController(LifecycleLoop loop) {
        this.loop = loop;
    }

    @Configuration(proxyBeanMethods = false)
    static class AdminSecurityConfiguration {
        @Bean
        AdminAuthFilter adminAuthFilter(AdminProperties properties) {
            return new AdminAuthFilter(AdminToken.load(properties));
        }
    }

    @PostMapping("/admin/requests/{id}/abort")
    Mono<ResponseEntity<Map<String, Object>>> abort(@PathVariable String id) {
        audit.info("admin abort of request {}", id);
        return loop.askRequests(requests -> requests.abort(id, AbortReason.ADMIN)).flatMap(known -> known
                ? Mono.just(ResponseEntity.accepted().body(Map.<String, Object>of("request_id", id, "aborted", true)))
                : Mono.error(new ConductorException(ErrorType.REQUEST_NOT_FOUND, "no request '" + id + "'")));
    }

    @PostMapping("/admin/requests/abort-all")
    Mono<ResponseEntity<Map<String, Object>>> abortAll() {
        audit.info("admin abort of every request");
        return loop.askRequests(requests -> requests.abortAll(AbortReason.ADMIN)).map(n -> {
            audit.info("admin abort-all aborted {} requests", n);
            return ResponseEntity.accepted().body(Map.<String, Object>of("aborted", n));
        });
    }

    @GetMapping("/admin/requests")
    Mono<Map<String, List<RequestView>>> list(@RequestParam(name = "state", required = false) String state) {
        audit.info("admin list of requests (state={})", state);
        RequestState filter;
        try {
            filter = state == null ? null : RequestState.valueOf(state.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return Mono.error(new ConductorException(ErrorType.MALFORMED_REQUEST, "state must be one of queued, running, draining, removed"));
        }
        return loop.askRequests(requests -> requests.list(filter)).map(list -> Map.of("requests", list));
    }

    @GetMapping("/admin/workers")
    Mono<Map<String, Object>> workers() {
        audit.info("admin list of workers");
        return loop.askRequests(RequestLifecycle::requestsPerWorker).zipWith(
                loop.ask(registry -> registry.snapshot(System.nanoTime()))).map(both -> {
            Map<String, Integer> load = both.getT1();
            Map<String, Object> workers = new LinkedHashMap<>();
            both.getT2().workers().forEach((id, view) -> workers.put(id.value(), Map.of(
                    "state", view.state().name().toLowerCase(Locale.ROOT),
                    "incarnation", view.incarnation() == null ? "" : view.incarnation().toString(),
                    "silent_for_ms", view.silentFor() == null ? -1 : view.silentFor().toMillis(),
                    "requests", load.getOrDefault(id.value(), 0))));
            return Map.of("workers", workers);
        });
    }

}
