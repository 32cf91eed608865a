package io.mstar.worker.engine;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import reactor.core.publisher.Mono;

/**
 * {@code GET /actuator/engine}: where every request stands on this worker ({@link EngineDescription}), for the
 * operator of a request that does not move (docs/operability.md#a-request-that-does-not-move). Request ids and
 * counts only, never tensor contents.
 */
@Endpoint(id = "engine")
public class EngineEndpoint {

    private final EngineLoop loop;

    public EngineEndpoint(EngineLoop loop) {
        this.loop = loop;
    }

    @ReadOperation
    public Mono<EngineDescription> describe() {
        return loop.describe();
    }
}
