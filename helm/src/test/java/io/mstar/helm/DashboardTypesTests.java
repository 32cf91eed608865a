package io.mstar.helm;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every dashboard type-checks as Grafana's {@code Dashboard} (npm {@code @grafana/schema}, pinned with
 * typescript in helm/tools/dashboard-types and installed into target/ by the build): each JSON file becomes
 * {@code export const dashboard: Dashboard = <json>;} and {@code tsc --noEmit} must accept it, which rejects
 * wrong types, missing required fields and unknown keys.
 */
class DashboardTypesTests {

    private static final Path DIR = Path.of(System.getProperty("mstar.dashboard.types.dir", "target/dashboard-types"));

    @AutoClose
    private final Chart chart = new Chart();

    @BeforeAll
    static void installed() {
        assertThat(DIR.resolve("node_modules/typescript/bin/tsc")).as("the build installs typescript (npm ci)").isRegularFile();
        assertThat(DIR.resolve("node_modules/@grafana/schema/package.json")).as("and @grafana/schema").isRegularFile();
    }

    private static MonitoringFiles.Run typeCheck(String name, String json) throws IOException, InterruptedException {
        Path sources = DIR.resolve("dashboards");
        try (var old = Files.list(Files.createDirectories(sources))) {
            for (Path f : old.toList()) {
                Files.delete(f);
            }
        }
        Files.writeString(sources.resolve(name + ".ts"), "import type { Dashboard } from '@grafana/schema';\n\n"
                + "export const dashboard: Dashboard = " + json.strip() + ";\n");
        return MonitoringFiles.run(DIR, List.of("node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.json"));
    }

    @Test
    void everyDashboardTypeChecksAsAGrafanaDashboard() throws IOException, InterruptedException {
        List<Path> dashboards = MonitoringFiles.dashboards(chart);
        assertThat(dashboards).isNotEmpty();
        for (Path dashboard : dashboards) {
            String name = dashboard.getFileName().toString().replace(".json", "");

            MonitoringFiles.Run tsc = typeCheck(name, Files.readString(dashboard));

            assertThat(tsc.output()).as(dashboard.toString()).isBlank();
            assertThat(tsc.exitCode()).as(dashboard.toString()).isZero();
        }
    }

    @Test
    void anUnknownPanelKeyOrAWrongTypeFailsTheCheck() throws IOException, InterruptedException {
        String unknownKey = "{\"schemaVersion\": 39, \"title\": \"t\", \"panels\": [{\"id\": 1, \"type\": \"stat\", "
                + "\"gridPos\": {\"x\": 0, \"y\": 0, \"w\": 4, \"h\": 4}, \"gridPosition\": 3}]}";
        String wrongType = "{\"schemaVersion\": \"39\", \"title\": \"t\"}";

        MonitoringFiles.Run unknown = typeCheck("unknown-key", unknownKey);
        MonitoringFiles.Run wrong = typeCheck("wrong-type", wrongType);

        assertThat(unknown.exitCode()).isNotZero();
        assertThat(unknown.output()).contains("'\"gridPosition\"' does not exist");
        assertThat(wrong.exitCode()).isNotZero();
        assertThat(wrong.output()).contains("Type 'string' is not assignable to type 'number'");
    }
}
