package io.mstar.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * helm/mstar rendered offline through helm-java (Helm's own Go library), each document parsed into its
 * typed fabric8 model. Kinds fabric8 has no model for (the Prometheus Operator's) come back as
 * {@link GenericKubernetesResource}.
 */
final class Chart implements AutoCloseable {

    static final String RELEASE = "mstar";
    static final String NAMESPACE = "inference";

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");

    private final Path repoRoot;
    private final KubernetesSerialization serialization = new KubernetesSerialization();
    private final FakeKubeApi api = new FakeKubeApi();

    Chart() {
        this.repoRoot = Path.of(System.getProperty("mstar.repo.root", "..")).toAbsolutePath().normalize();
    }

    /** The API server the chart's {@code lookup} calls reach. */
    FakeKubeApi api() {
        return api;
    }

    @Override
    public void close() {
        api.close();
    }

    Path repoRoot() {
        return repoRoot;
    }

    Path dir() {
        return repoRoot.resolve("helm/mstar");
    }

    Path ciValues(String name) {
        Path file = dir().resolve("ci").resolve(name);
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no CI values file " + file);
        }
        return file;
    }

    Helm helm() {
        return new Helm(dir());
    }

    /** Renders with the given values files (in order) and --set pairs; throws what helm reports on failure. */
    Rendered render(List<Path> valuesFiles, Map<String, Object> sets) {
        TemplateCommand command = helm().template().withName(RELEASE).withNamespace(NAMESPACE).withKubeVersion("1.31.0");
        valuesFiles.forEach(command::withValuesFile);
        sets.forEach(command::set);
        String yaml = command.call();
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : DOCUMENT_SEPARATOR.split(yaml)) {
            if (document.lines().allMatch(line -> line.isBlank() || line.stripLeading().startsWith("#"))) {
                continue;
            }
            KubernetesResource parsed = serialization.unmarshal(document);
            if (!(parsed instanceof HasMetadata object)) {
                throw new AssertionError("rendered document is not a Kubernetes object: " + document);
            }
            objects.add(object);
        }
        return new Rendered(yaml, objects);
    }

    Rendered render(Path... valuesFiles) {
        return render(List.of(valuesFiles), Map.of());
    }

    Rendered renderWith(Map<String, Object> sets) {
        return render(List.of(), sets);
    }

    /** Helm's message when rendering fails (schema or template), or empty when it renders. */
    Optional<String> renderFailure(List<Path> valuesFiles, Map<String, Object> sets) {
        try {
            render(valuesFiles, sets);
            return Optional.empty();
        } catch (IllegalStateException e) {
            return Optional.of(e.getMessage());
        }
    }

    /**
     * Helm's message when the chart, rendered without its values.schema.json (what {@code --skip-schema-validation}
     * does), fails with these --set pairs; empty when it renders. The copy of the chart goes to {@code workDir}.
     */
    Optional<String> renderFailureWithoutSchema(Path workDir, Map<String, Object> sets) {
        return renderFailureWithoutSchema(workDir, sets, null);
    }

    /** The same with a values file ({@code -f}), or none when {@code values} is null. */
    Optional<String> renderFailureWithoutSchema(Path workDir, Map<String, Object> sets, Path values) {
        Path copy = workDir.resolve("mstar-without-schema");
        try {
            if (!Files.isDirectory(copy)) {
                try (Stream<Path> files = Files.walk(dir())) {
                    for (Path file : files.sorted(Comparator.naturalOrder()).toList()) {
                        Path target = copy.resolve(dir().relativize(file).toString());
                        if (Files.isDirectory(file)) {
                            Files.createDirectories(target);
                        } else if (!file.getFileName().toString().equals("values.schema.json")) {
                            Files.copy(file, target);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        TemplateCommand command = new Helm(copy).template().withName(RELEASE).withNamespace(NAMESPACE)
                .withKubeVersion("1.31.0");
        if (values != null) {
            command = command.withValuesFile(values);
        }
        sets.forEach(command::set);
        try {
            command.call();
            return Optional.empty();
        } catch (IllegalStateException e) {
            return Optional.of(e.getMessage());
        }
    }

    static String name(String component) {
        return RELEASE + "-" + component;
    }

    record Rendered(String yaml, List<HasMetadata> objects) {

        /** The pod templates of the conductor's Deployment and the worker StatefulSet, in that order. */
        List<PodSpec> servicePods() {
            return List.of(one(Deployment.class, name("conductor")).getSpec().getTemplate().getSpec(),
                    one(StatefulSet.class, name("worker")).getSpec().getTemplate().getSpec());
        }

        /** The one container of {@code pod}: the chart runs each service alone in its pod. */
        static Container onlyContainer(PodSpec pod) {
            assertThat(pod.getContainers()).hasSize(1);
            return pod.getContainers().get(0);
        }

        <T extends HasMetadata> T one(Class<T> type, String name) {
            return find(type, name).orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name
                    + " among " + summary()));
        }

        <T extends HasMetadata> Optional<T> find(Class<T> type, String name) {
            return objects.stream().filter(type::isInstance).map(type::cast)
                    .filter(o -> o.getMetadata().getName().equals(name)).findFirst();
        }

        <T extends HasMetadata> List<T> all(Class<T> type) {
            return objects.stream().filter(type::isInstance).map(type::cast).toList();
        }

        GenericKubernetesResource generic(String kind) {
            List<GenericKubernetesResource> found = objects.stream()
                    .filter(o -> o instanceof GenericKubernetesResource && o.getKind().equals(kind))
                    .map(GenericKubernetesResource.class::cast).toList();
            if (found.size() != 1) {
                throw new AssertionError("expected one " + kind + ", found " + found.size() + " among " + summary());
            }
            return found.get(0);
        }

        Map<String, Integer> kindCounts() {
            Map<String, Integer> counts = new LinkedHashMap<>();
            objects.forEach(o -> counts.merge(o.getKind(), 1, Integer::sum));
            return counts;
        }

        List<String> summary() {
            return objects.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList();
        }
    }
}
