package io.mstar.stack;

import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads sample values out of a Prometheus text exposition, the format /actuator/prometheus serves. */
final class PrometheusScrape {

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? (\\S+)",
            Pattern.MULTILINE);

    private final String text;

    PrometheusScrape(String text) {
        this.text = text;
    }

    /** The value of the sample named {@code name} whose labels include all of {@code labels}. */
    Optional<Double> value(String name, Map<String, String> labels) {
        Matcher matcher = SAMPLE.matcher(text);
        while (matcher.find()) {
            if (!matcher.group(1).equals(name)) {
                continue;
            }
            String labelText = matcher.group(3) == null ? "" : matcher.group(3);
            boolean all = labels.entrySet().stream()
                    .allMatch(e -> labelText.contains(e.getKey() + "=\"" + e.getValue() + "\""));
            if (all) {
                return Optional.of(Double.parseDouble(matcher.group(4)));
            }
        }
        return Optional.empty();
    }

    /** The sum over every series named {@code name}; 0 when there is none. */
    double sum(String name) {
        return sum(name, Map.of());
    }

    /** The sum over every series named {@code name} whose labels include all of {@code labels}; 0 when none. */
    double sum(String name, Map<String, String> labels) {
        double total = 0;
        Matcher matcher = SAMPLE.matcher(text);
        while (matcher.find()) {
            String labelText = matcher.group(3) == null ? "" : matcher.group(3);
            if (matcher.group(1).equals(name) && labels.entrySet().stream()
                    .allMatch(e -> labelText.contains(e.getKey() + "=\"" + e.getValue() + "\""))) {
                total += Double.parseDouble(matcher.group(4));
            }
        }
        return total;
    }

    boolean hasMetricStartingWith(String prefix) {
        return Pattern.compile("^" + Pattern.quote(prefix), Pattern.MULTILINE).matcher(text).find();
    }
}
