package io.mstar.conductor;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The conductor: drives every request's walks over the workers (ARCHITECTURE §5). */
@SpringBootApplication
@ConfigurationPropertiesScan
public class ConductorApplication {

    public static void main(String[] args) {
        SpringApplication.run(ConductorApplication.class, args);
    }
}
