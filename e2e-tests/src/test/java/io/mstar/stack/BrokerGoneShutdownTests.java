package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * With the broker gone for good, the services still exit promptly on SIGTERM, as an orchestrator stopping a broken
 * release needs: their last sends (heartbeats, SetupDones) can no longer be delivered, and closing the Kafka producer
 * used to wait Spring's default 30 s for them (34 s from SIGTERM to exit, measured) before it gave up.
 */
@Tag("kafka")
class BrokerGoneShutdownTests {

    /** Well under the 30 s the producer's close used to wait; the JVM and Spring need a few seconds of it. */
    private static final long PROMPT_SECONDS = 20;

    @RegisterExtension
    static final LocalStackExtension STACK = LocalStackExtension.withWorkers(2);

    @Test
    void everyServiceExitsPromptlyOnSigtermOnceTheBrokerIsGone() throws InterruptedException {
        LocalStack stack = STACK.stack();
        stack.broker().process().kill();
        // Long enough for heartbeats and SetupDones to be queued for a broker that will not answer.
        Thread.sleep(5_000);
        long conductor = secondsToStop(stack.conductor().process());
        long worker = secondsToStop(stack.workers().get(1).process());
        System.out.printf("[reliability] with the broker gone, SIGTERM to exit took %d s (conductor) and %d s (worker-1)%n",
                conductor, worker);
        assertThat(conductor).as("conductor").isLessThan(PROMPT_SECONDS);
        assertThat(worker).as("worker-1").isLessThan(PROMPT_SECONDS);
    }

    private static long secondsToStop(ManagedProcess process) {
        long start = System.nanoTime();
        process.stop(Duration.ofSeconds(60));
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
    }
}
