package io.mstar.helm;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Who may reach which port: the data plane stays inside the release, admin goes to the configured peers. */
class NetworkPolicyTests {

    private static final Map<String, String> CONDUCTOR = Map.of("app.kubernetes.io/name", "mstar",
            "app.kubernetes.io/instance", "mstar", "app.kubernetes.io/component", "conductor");
    private static final Map<String, String> WORKER = Map.of("app.kubernetes.io/name", "mstar",
            "app.kubernetes.io/instance", "mstar", "app.kubernetes.io/component", "worker");

    @AutoClose
    private final Chart chart = new Chart();

    private static NetworkPolicyIngressRule ruleFor(NetworkPolicy policy, String port) {
        List<NetworkPolicyIngressRule> rules = policy.getSpec().getIngress().stream()
                .filter(r -> r.getPorts().stream().anyMatch(p -> port.equals(p.getPort().getStrVal()))).toList();
        assertThat(rules).as("rules for port %s", port).hasSize(1);
        return rules.get(0);
    }

    @Test
    void workerDataPortIsOpenOnlyToThisReleasesConductorAndWorkers() {
        Chart.Rendered rendered = chart.render(chart.ciValues("external-kafka-values.yaml"));
        NetworkPolicy workers = rendered.one(NetworkPolicy.class, Chart.name("worker"));

        assertThat(workers.getSpec().getPodSelector().getMatchLabels()).isEqualTo(WORKER);
        assertThat(workers.getSpec().getPolicyTypes()).containsExactly("Ingress");
        NetworkPolicyIngressRule data = ruleFor(workers, "data");
        assertThat(data.getPorts()).hasSize(1);
        assertThat(data.getFrom()).extracting(p -> p.getPodSelector().getMatchLabels()).containsExactlyInAnyOrder(CONDUCTOR, WORKER);
        assertThat(data.getFrom()).allSatisfy(p -> assertThat(p.getNamespaceSelector()).isNull());
        // The monitoring namespace may scrape HTTP but never read tensors.
        NetworkPolicyIngressRule http = ruleFor(workers, "http");
        assertThat(http.getFrom()).filteredOn(p -> p.getNamespaceSelector() != null)
                .singleElement().satisfies(p -> assertThat(p.getNamespaceSelector().getMatchLabels())
                        .containsEntry("kubernetes.io/metadata.name", "monitoring"));
    }

    @Test
    void conductorDataPortIsOpenOnlyToThisReleasesWorkers() {
        NetworkPolicy conductor = chart.render().one(NetworkPolicy.class, Chart.name("conductor"));

        NetworkPolicyIngressRule data = ruleFor(conductor, "data");
        assertThat(data.getFrom()).extracting(p -> p.getPodSelector().getMatchLabels()).containsExactly(WORKER);
        assertThat(data.getFrom()).allSatisfy(p -> assertThat(p.getNamespaceSelector()).isNull());
    }

    @Test
    void conductorPortIsOpenToTheConfiguredAdminSelectorAndExtraPeersOnly() {
        Chart.Rendered rendered = chart.render(chart.ciValues("external-kafka-values.yaml"));
        NetworkPolicy conductor = rendered.one(NetworkPolicy.class, Chart.name("conductor"));

        assertThat(conductor.getSpec().getPodSelector().getMatchLabels()).isEqualTo(CONDUCTOR);
        List<NetworkPolicyPeer> from = ruleFor(conductor, "http").getFrom();
        NetworkPolicyPeer admin = from.get(0);
        // Namespace and pod selector in one peer: both must match (the ops namespace's admin console only).
        assertThat(admin.getNamespaceSelector().getMatchLabels()).containsExactly(Map.entry("kubernetes.io/metadata.name", "ops"));
        assertThat(admin.getPodSelector().getMatchLabels()).containsExactly(Map.entry("app", "admin-console"));
        assertThat(from).extracting(p -> p.getNamespaceSelector() == null ? null
                : p.getNamespaceSelector().getMatchLabels().get("kubernetes.io/metadata.name"))
                .containsExactly("ops", "ingress-nginx", "monitoring");
    }

    @Test
    void byDefaultTheConductorPortIsOpenToThisNamespaceOnly() {
        NetworkPolicy conductor = chart.render().one(NetworkPolicy.class, Chart.name("conductor"));

        List<NetworkPolicyPeer> from = ruleFor(conductor, "http").getFrom();
        assertThat(from).singleElement().satisfies(p -> {
            assertThat(p.getNamespaceSelector()).isNull();
            assertThat(p.getPodSelector()).isNotNull();
        });
    }

    @Test
    void bundledBrokerAcceptsOnlyThisReleasesPods() {
        NetworkPolicy kafka = chart.render().one(NetworkPolicy.class, Chart.name("kafka"));

        NetworkPolicyIngressRule rule = ruleFor(kafka, "kafka");
        assertThat(rule.getFrom()).singleElement().satisfies(p -> assertThat(p.getPodSelector().getMatchLabels())
                .containsExactlyInAnyOrderEntriesOf(Map.of("app.kubernetes.io/name", "mstar", "app.kubernetes.io/instance", "mstar")));
    }

    @Test
    void disablingRendersNoPolicies() {
        assertThat(chart.renderWith(Map.of("networkPolicy.enabled", false)).all(NetworkPolicy.class)).isEmpty();
    }
}
