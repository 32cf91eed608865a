package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The meter convention (docs/architecture.md#meters-declared-once-per-role) for service tests: a Prometheus scrape
 * holds every meter a role declares, under the name operators query. Lives in shared-model's test-jar beside
 * {@link ControlPlaneMeters}' declarations so the conductor's and worker's tests derive the names one way; the scrape
 * itself comes from each service's actuator.
 */
public final class ControlPlaneScrape {

    private ControlPlaneScrape() {
    }

    /** Asserts {@code scrape} has a sample line for every {@link ControlPlaneMeters.Definition} of {@code role}. */
    public static void assertHoldsEveryDeclaredMeter(String scrape, ControlPlaneMeters.Role role) {
        for (ControlPlaneMeters.Definition definition : ControlPlaneMeters.Definition.values()) {
            String expected = definition.declaration(role).scrapedSample();
            assertThat(scrape).as(definition.name()).containsPattern("(?m)^" + expected + "[{ ]");
        }
    }
}
