package io.mstar.bench.request;

import java.util.Arrays;
import java.util.TreeMap;

/**
 * A Prometheus histogram read off a service's scrape ({@link TransitionLatency}): cumulative bucket counts by upper
 * bound (seconds; the last is +Inf), summed over the series that match, so that two scrapes' difference is what
 * happened between them.
 */
record Histogram(double[] bounds, double[] cumulative, double count, double sum) {

    static final Histogram EMPTY = new Histogram(new double[0], new double[0], 0, 0);

    /** The series named {@code name} whose labels contain {@code label} ({@code key="value"}), summed. */
    static Histogram parse(String scrape, String name, String label) {
        TreeMap<Double, Double> buckets = new TreeMap<>();
        double count = 0;
        double sum = 0;
        for (String line : scrape.split("\n")) {
            if (line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            if (space < 0) {
                continue;
            }
            // Newer Prometheus text puts an exemplar or timestamp after the value: take the token after the labels.
            int close = line.indexOf('}');
            String head = close < 0 ? line.substring(0, line.indexOf(' ')) : line.substring(0, close + 1);
            String rest = line.substring(head.length()).trim().split(" ")[0];
            String metric = head.contains("{") ? head.substring(0, head.indexOf('{')) : head;
            // Other metrics' label values may hold braces (uri="/v1/requests/{id}"): skip them before parsing.
            if (!metric.startsWith(name) || !head.contains(label)) {
                continue;
            }
            double value = Double.parseDouble(rest);
            if (metric.equals(name + "_bucket")) {
                String le = head.replaceAll(".*le=\"([^\"]*)\".*", "$1");
                double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                buckets.merge(bound, value, Double::sum);
            } else if (metric.equals(name + "_count")) {
                count += value;
            } else if (metric.equals(name + "_sum")) {
                sum += value;
            }
        }
        double[] bounds = buckets.keySet().stream().mapToDouble(Double::doubleValue).toArray();
        double[] cumulative = buckets.values().stream().mapToDouble(Double::doubleValue).toArray();
        return new Histogram(bounds, cumulative, count, sum);
    }

    Histogram plus(Histogram other) {
        return combine(other, 1);
    }

    Histogram minus(Histogram earlier) {
        return combine(earlier, -1);
    }

    private Histogram combine(Histogram other, int sign) {
        if (bounds.length == 0) {
            return sign > 0 ? other : this;
        }
        if (other.bounds.length == 0) {
            return this;
        }
        if (!Arrays.equals(bounds, other.bounds)) {
            throw new IllegalStateException("different bucket grids: " + bounds.length + " and " + other.bounds.length);
        }
        double[] c = new double[cumulative.length];
        for (int i = 0; i < c.length; i++) {
            c[i] = cumulative[i] + sign * other.cumulative[i];
        }
        return new Histogram(bounds, c, count + sign * other.count, sum + sign * other.sum);
    }

    double mean() {
        return count <= 0 ? Double.NaN : sum / count;
    }

    /** As Prometheus' histogram_quantile: linear within the bucket the rank falls in; seconds. */
    double quantile(double q) {
        if (count() <= 0) {
            return Double.NaN;
        }
        double rank = q * cumulative[cumulative.length - 1];
        double lower = 0;
        double below = 0;
        for (int i = 0; i < bounds.length; i++) {
            if (cumulative[i] >= rank) {
                if (Double.isInfinite(bounds[i])) {
                    return lower;
                }
                double inBucket = cumulative[i] - below;
                return inBucket == 0 ? bounds[i] : lower + (bounds[i] - lower) * (rank - below) / inBucket;
            }
            lower = bounds[i];
            below = cumulative[i];
        }
        return lower;
    }
}
