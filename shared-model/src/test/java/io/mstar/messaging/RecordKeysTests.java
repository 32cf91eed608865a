package io.mstar.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.mstar.wire.AbortRequest;
import io.mstar.wire.CollectiveBootstrap;
import io.mstar.wire.ConductorHeartbeat;
import io.mstar.wire.ConductorMessage;
import io.mstar.wire.DrainRequest;
import io.mstar.wire.FailRequests;
import io.mstar.wire.MessageSource;
import io.mstar.wire.ReadsDone;
import io.mstar.wire.ScheduleTPNode;
import io.mstar.wire.SetupDone;
import io.mstar.wire.TPNoSpeculation;
import io.mstar.wire.WorkerMessage;

class RecordKeysTests {

    @Test
    void requestScopedWorkerMessagesAreKeyedByRequestId() {
        assertThat(RecordKeys.of(WorkerMessage.of(new DrainRequest("r-1", MessageSource.CONDUCTOR)))).isEqualTo("r-1");
    }

    @Test
    void tensorParallelScheduleMessagesAreKeyedByNodeName() {
        assertThat(RecordKeys.of(WorkerMessage.of(new ScheduleTPNode("llm", "decode", List.of("r-1", "r-2"), 3)))).isEqualTo("llm");
        assertThat(RecordKeys.of(WorkerMessage.of(new TPNoSpeculation("llm", "decode", 3)))).isEqualTo("llm");
    }

    @Test
    void conductorHeartbeatIsKeyedByTheConductor() {
        assertThat(RecordKeys.of(WorkerMessage.of(new ConductorHeartbeat(2000)))).isEqualTo("conductor");
        assertThat(RecordKeys.of(WorkerMessage.of(CollectiveBootstrap.of("mstar.toy-tts.g1.i0", 1,
                new byte[CollectiveBootstrap.NCCL_UNIQUE_ID_BYTES])))).isEqualTo("mstar.toy-tts.g1.i0");
    }

    @Test
    void setupDoneIsKeyedByTheWorkerItAnnounces() {
        assertThat(RecordKeys.of(ConductorMessage.of(new SetupDone("worker-3")), EntityId.worker(3))).isEqualTo("worker-3");
    }

    @Test
    void failRequestsIsKeyedByTheSendingWorkerNotByARequest() {
        ConductorMessage fail = ConductorMessage.of(new FailRequests(Map.of("r-1", "boom", "r-2", "oom")));

        assertThat(RecordKeys.of(fail, EntityId.worker(2))).isEqualTo("worker-2");
    }

    @Test
    void requestScopedConductorMessagesAreKeyedByRequestId() {
        assertThat(RecordKeys.of(ConductorMessage.of(new ReadsDone("r-9", "worker-1")), EntityId.worker(1))).isEqualTo("r-9");
        assertThat(RecordKeys.of(ConductorMessage.of(new AbortRequest("r-8")), EntityId.CONDUCTOR)).isEqualTo("r-8");
    }
}
