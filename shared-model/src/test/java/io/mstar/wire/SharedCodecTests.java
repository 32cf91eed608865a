package io.mstar.wire;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** One codec instance is shared by every listener thread of a service. */
class SharedCodecTests {

    @Test
    void oneCodecServesConcurrentEncodersAndDecoders() throws Exception {
        WireCodec codec = new WireCodec();
        List<WorkerMessage> worker = new ArrayList<>(GoldenMessages.worker().values());
        List<ConductorMessage> conductor = new ArrayList<>(GoldenMessages.conductor().values());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                results.add(pool.submit(() -> {
                    int checked = 0;
                    for (int i = 0; i < 100; i++) {
                        for (WorkerMessage m : worker) {
                            assertThat(codec.decodeWorkerMessage(codec.encode(m))).isEqualTo(m);
                            checked++;
                        }
                        for (ConductorMessage m : conductor) {
                            assertThat(codec.decodeConductorMessage(codec.encode(m))).isEqualTo(m);
                            checked++;
                        }
                    }
                    return checked;
                }));
            }
            for (Future<Integer> f : results) {
                assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(100 * (worker.size() + conductor.size()));
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
