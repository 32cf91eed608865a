package io.mstar.bench.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * The scraped histograms TransitionLatency reads its percentiles from: series matched by name and label and summed,
 * other metrics (braces in their label values, exemplars after the value) skipped, two scrapes subtracted, and
 * quantiles interpolated within a bucket as Prometheus' histogram_quantile does.
 */
class HistogramTests {

    private static String scrape(int fastA, int slowA, int fastB) {
        return String.join("\n",
                "# HELP mstar_worker_transition_wait_seconds",
                "# TYPE mstar_worker_transition_wait_seconds histogram",
                "mstar_worker_transition_wait_seconds_bucket{model=\"counter\",le=\"0.001\"} " + fastA,
                "mstar_worker_transition_wait_seconds_bucket{model=\"counter\",le=\"0.002\"} " + (fastA + slowA),
                "mstar_worker_transition_wait_seconds_bucket{model=\"counter\",le=\"+Inf\"} " + (fastA + slowA),
                "mstar_worker_transition_wait_seconds_count{model=\"counter\"} " + (fastA + slowA),
                "mstar_worker_transition_wait_seconds_sum{model=\"counter\"} " + (fastA * 0.0005 + slowA * 0.0015),
                "mstar_worker_transition_wait_seconds_bucket{model=\"toy-tts\",le=\"0.001\"} " + fastB,
                "mstar_worker_transition_wait_seconds_bucket{model=\"toy-tts\",le=\"0.002\"} " + fastB,
                "mstar_worker_transition_wait_seconds_bucket{model=\"toy-tts\",le=\"+Inf\"} " + fastB,
                "mstar_worker_transition_wait_seconds_count{model=\"toy-tts\"} " + fastB,
                "mstar_worker_transition_wait_seconds_sum{model=\"toy-tts\"} " + fastB * 0.0005,
                "http_server_requests_seconds_count{uri=\"/v1/requests/{id}\"} 3 # {trace_id=\"x\"} 1.0",
                "");
    }

    @Test
    void seriesMatchingTheLabelAreSummedAndTheRestSkipped() {
        Histogram counter = Histogram.parse(scrape(30, 10, 99), "mstar_worker_transition_wait_seconds",
                "model=\"counter\"");
        assertThat(counter.count()).isEqualTo(40);
        assertThat(counter.bounds()).containsExactly(0.001, 0.002, Double.POSITIVE_INFINITY);
        Histogram all = Histogram.parse(scrape(30, 10, 99), "mstar_worker_transition_wait_seconds", "");
        assertThat(all.count()).isEqualTo(139);
        assertThat(all.cumulative()).containsExactly(129, 139, 139);
    }

    @Test
    void quantilesInterpolateWithinTheirBucketAndDifferencesCountOnlyTheInterval() {
        String name = "mstar_worker_transition_wait_seconds";
        Histogram before = Histogram.parse(scrape(30, 10, 0), name, "");
        Histogram after = Histogram.parse(scrape(30, 50, 0), name, "");
        Histogram between = after.minus(before);
        assertThat(between.count()).isEqualTo(40);
        // all 40 in (1 ms, 2 ms]: the median lies halfway through that bucket
        assertThat(between.quantile(0.5)).isCloseTo(0.0015, within(1e-12));
        assertThat(between.mean()).isCloseTo(0.0015, within(1e-12));
        assertThat(before.quantile(0.5)).isCloseTo(0.001 * 20 / 30, within(1e-12));
        assertThat(Histogram.EMPTY.plus(before)).isEqualTo(before);
        assertThat(Histogram.EMPTY.quantile(0.5)).isNaN();
    }

    @Test
    void scrapesOnDifferentGridsDoNotCombine() {
        Histogram a = new Histogram(new double[] {0.001, Double.POSITIVE_INFINITY}, new double[] {1, 2}, 2, 0.01);
        Histogram b = new Histogram(new double[] {0.002, Double.POSITIVE_INFINITY}, new double[] {1, 2}, 2, 0.01);
        assertThatThrownBy(() -> a.minus(b)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("different bucket grids");
    }
}
