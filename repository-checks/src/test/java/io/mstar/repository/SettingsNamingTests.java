package io.mstar.repository;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The naming rule of settings types (docs/architecture.md#naming-of-settings-types), held both ways over the main
 * sources: a type bound by {@code @ConfigurationProperties} is named {@code *Properties}, and a {@code *Properties}
 * type is bound. {@code *Settings} (plain records) and {@code *Config} (the deployment config) are never bound.
 */
class SettingsNamingTests {

    private static final Pattern MAIN_SOURCE = Pattern.compile("/src/main/java/.*\\.java$");
    /** The annotation on a type, then that type's name (records and classes). */
    private static final Pattern BOUND_TYPE = Pattern.compile(
            "@ConfigurationProperties\\b[^\\n]*\\n(?:\\s*@[^\\n]*\\n)*\\s*public\\s+(?:final\\s+)?(?:record|class)\\s+(\\w+)");

    private static Repository repo;

    @BeforeAll
    static void findRepository() {
        repo = Repository.find(Path.of("").toAbsolutePath(), false);
    }

    @Test
    void everyTypeBoundByConfigurationPropertiesIsNamedProperties() {
        List<String> wrong = new ArrayList<>();
        int bound = 0;
        for (String file : mainSources()) {
            Matcher m = BOUND_TYPE.matcher(repo.text(file).content());
            while (m.find()) {
                bound++;
                if (!m.group(1).endsWith("Properties")) {
                    wrong.add(file + ": " + m.group(1));
                }
            }
        }
        assertThat(bound).as("bound types found (the pattern reads the sources)").isGreaterThan(5);
        assertThat(wrong).as("@ConfigurationProperties types not named *Properties").isEmpty();
    }

    @Test
    void everyPropertiesTypeIsBoundAndNoSettingsOrConfigTypeIs() {
        List<String> wrong = new ArrayList<>();
        int properties = 0;
        for (String file : mainSources()) {
            String name = file.substring(file.lastIndexOf('/') + 1, file.length() - ".java".length());
            boolean bound = repo.text(file).content().contains("@ConfigurationProperties(");
            if (name.endsWith("Properties")) {
                properties++;
                if (!bound) {
                    wrong.add(file + ": a *Properties type that Spring does not bind");
                }
            } else if ((name.endsWith("Settings") || name.endsWith("Config")) && bound) {
                wrong.add(file + ": a bound type must be named *Properties");
            }
        }
        assertThat(properties).as("*Properties types found (the scan reads the sources)").isGreaterThan(5);
        assertThat(wrong).isEmpty();
    }

    private static List<String> mainSources() {
        return repo.checkedFiles().stream().filter(f -> MAIN_SOURCE.matcher(f).find()).toList();
    }
}
