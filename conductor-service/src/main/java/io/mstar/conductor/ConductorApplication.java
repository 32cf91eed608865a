package io.mstar.conductor;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The conductor: drives every request's walks over the workers (docs/architecture.md#a-requests-life). */
@SpringBootApplication
@ConfigurationPropertiesScan
public class ConductorApplication {

    public static void main(String[] args) {
        SpringApplication.run(ConductorApplication.class, args);
    }
}
