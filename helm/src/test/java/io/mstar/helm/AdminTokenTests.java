package io.mstar.helm;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The admin token is never a fixed default: generated once, kept across upgrades, or supplied. */
class AdminTokenTests {

    @AutoClose
    private final Chart chart = new Chart();

    private static String token(Chart.Rendered rendered) {
        Secret secret = rendered.one(Secret.class, Chart.name("admin-token"));
        return new String(Base64.getDecoder().decode(secret.getData().get("token")), StandardCharsets.UTF_8);
    }

    @Test
    void firstInstallGeneratesALongRandomTokenThatDiffersPerInstall() {
        String first = token(chart.render());
        String second = token(chart.render());

        assertThat(first).hasSize(48).matches("[A-Za-z0-9]+");
        assertThat(second).hasSize(48).isNotEqualTo(first);
    }

    @Test
    void upgradeKeepsTheTokenAlreadyInTheCluster() {
        chart.api().putSecret(Chart.NAMESPACE, "mstar-admin-token", "token", "issued-by-the-first-install-0123456789");

        assertThat(token(chart.render())).isEqualTo("issued-by-the-first-install-0123456789");
        assertThat(token(chart.render())).isEqualTo("issued-by-the-first-install-0123456789");
    }

    @Test
    void anExplicitValueWinsOverGeneration() {
        String given = "an-operator-chosen-token-of-sufficient-length";

        assertThat(token(chart.renderWith(Map.of("adminToken.value", given)))).isEqualTo(given);
    }

    @Test
    void anExistingSecretIsReferencedAndNoSecretIsRendered() {
        Chart.Rendered rendered = chart.render(List.of(),
                Map.of("adminToken.existingSecret", "ops-admin", "adminToken.secretKey", "bearer"));

        // The data-plane secret is the chart's own unless dataPlane.existingSecret says otherwise.
        assertThat(rendered.all(Secret.class)).extracting(s -> s.getMetadata().getName())
                .containsExactly(Chart.name("data-plane"));
        var pod = rendered.one(Deployment.class, Chart.name("conductor")).getSpec().getTemplate().getSpec();
        var volume = pod.getVolumes().stream().filter(v -> v.getName().equals("admin-token")).findFirst().orElseThrow();
        assertThat(volume.getSecret().getSecretName()).isEqualTo("ops-admin");
        assertThat(volume.getSecret().getItems()).singleElement().satisfies(i -> assertThat(i.getKey()).isEqualTo("bearer"));
        assertThat(pod.getContainers().get(0).getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("MSTAR_CONDUCTOR_ADMIN_TOKEN_FILE");
            assertThat(e.getValue()).isEqualTo("/etc/mstar/admin/bearer");
        });
    }
}
