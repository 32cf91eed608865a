package io.mstar.conductor.api;

import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/** Applies the body-size limit to every decoder, so an oversized body fails while it is read, not after. */
@Configuration(proxyBeanMethods = false)
class ApiConfiguration implements WebFluxConfigurer {

    private final ApiProperties properties;

    ApiConfiguration(ApiProperties properties) {
        this.properties = properties;
    }

    @Override
    public void configureHttpMessageCodecs(ServerCodecConfigurer configurer) {
        configurer.defaultCodecs().maxInMemorySize(Math.toIntExact(properties.maxBodySize().toBytes()));
    }
}
