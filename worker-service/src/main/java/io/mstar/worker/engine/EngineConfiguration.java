package io.mstar.worker.engine;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlPlaneSender;
import io.mstar.messaging.InboxPosition;

/** The engine loop and what it publishes. */
@Configuration(proxyBeanMethods = false)
class EngineConfiguration {

    @Bean
    SetupDoneAcks setupDoneAcks() {
        return new SetupDoneAcks();
    }

    @Bean
    EngineLoop engineLoop(ControlIdentity identity, WorkerProperties worker, ControlPlaneSender sender,
            InboxPosition position, SetupDoneAcks acks) {
        return new EngineLoop(identity.self(), worker.setupDoneInterval(), sender, position, acks);
    }
}
