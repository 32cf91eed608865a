package io.mstar.worker.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.mstar.controlplane.DataPlaneSecurityProperties;
import io.mstar.deployment.DeploymentConfig;
import io.mstar.graph.WorkerGraph;
import io.mstar.graph.WorkerGraphSplit;
import io.mstar.messaging.ControlIdentity;
import io.mstar.messaging.ControlPlaneSender;
import io.mstar.messaging.InboxPosition;
import io.mstar.messaging.Topics;
import io.mstar.model.ModelGraphs;
import io.mstar.model.ToyTtsModel;
import io.mstar.tensor.TensorMeters;
import io.mstar.tensor.device.Device;
import io.mstar.tensor.transport.DataPlaneTls;
import io.mstar.tensor.transport.ReadGrants;
import io.mstar.worker.kernel.KernelCatalog;
import io.mstar.worker.kernel.ModelKernels;
import io.mstar.worker.kernel.onnx.OnnxModelKernels;
import io.mstar.worker.kernel.tts.ToyTtsKernels;
import io.mstar.worker.resident.ResidentRefusals;
import io.mstar.worker.tp.NcclBootstraps;
import io.mstar.worker.tp.TensorParallelProperties;

/** The engine loop, its engine and data plane, and what they publish. */
@Configuration(proxyBeanMethods = false)
class EngineConfiguration {

    /** Where this worker, a follower of a GPU tensor-parallel group, receives its leader's NCCL unique ids. */
    @Bean
    NcclBootstraps ncclBootstraps(DeploymentConfig config, ControlIdentity identity, Topics topics) {
        return new NcclBootstraps(TensorParallelGroups.of(config, identity.self(), ToyTtsModel.NAME)
                .filter(rank -> rank.rank() > 0).map(rank -> Set.of(rank.collectiveName(topics))).orElse(Set.of()));
    }

    @Bean
    SetupDoneAcks setupDoneAcks() {
        return new SetupDoneAcks();
    }

    /**
     * Every built-in model's kernels for the data plane's device: CUDA kernels on a GPU when this build has them.
     * A model with weights (minilm-embed) is loaded only when the deployment places one of its nodes on this worker.
     * Closed before the data plane (it depends on it), so weights leave the device before the device closes.
     */
    @Bean(destroyMethod = "close")
    KernelCatalog kernelCatalog(WorkerDataPlane data, DeploymentConfig config, ControlIdentity identity,
            MiniLmProperties minilm, ResidentProperties resident, MeterRegistry registry, EngineProperties engine,
            Topics topics, TensorParallelProperties tp, Outbox outbox, NcclBootstraps bootstraps) {
        TensorParallelGroups.refuseUnsupported(config, identity.self());
        List<ModelKernels> models = new ArrayList<>();
        models.add(WorkerDevices.counterKernels(data.device()));
        models.add(TensorParallelGroups.of(config, identity.self(), ToyTtsModel.NAME)
                .map(rank -> ToyTtsKernels.tensorParallel(data.device(), RankCollectives.of(rank, config,
                        data.device(), tp, engine.lockstepTimeout(), rank.setup(config, engine), topics, outbox,
                        bootstraps, registry)))
                .orElseGet(() -> ToyTtsKernels.forDevice(data.device(), resident.settings(), registry)));
        WorkerDevices.miniLmKernels(data.device(), config, identity.self(), minilm.cuda()).ifPresent(models::add);
        models.addAll(OnnxModelKernels.forWorker(config, identity.self().workerOrdinal()));
        KernelCatalog catalog = new KernelCatalog(models);
        if (resident.settings().mode().enabled(data.device().kind())) {
            ResidentRefusals.report(catalog, registry);
        }
        return catalog;
    }

    /**
     * TLS on the data port from {@code mstar.data-plane.tls.*}, its files read and checked once: a certificate or key
     * that is missing or wrong stops the worker here, naming the property (docs/security.md#tls-on-the-data-port).
     */
    @Bean
    DataPlaneTls workerDataPlaneTls(DataPlaneSecurityProperties security) {
        return security.dataPlaneTls();
    }

    /** The device from {@code mstar.worker.device}; a fatal error on it reaches the engine as a DeviceException. */
    @Bean(destroyMethod = "close")
    WorkerDataPlane workerDataPlane(ControlIdentity identity, WorkerProperties worker, WorkerDataProperties data,
            MeterRegistry registry, ReadGrants grants, DataPlaneTls tls) {
        Device device = WorkerDevices.open(worker.device(), data);
        try {
            return new WorkerDataPlane(identity.self(), data, device, registry, grants, tls);
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
    }

    @Bean
    Outbox outbox(ControlPlaneSender sender) {
        return new KafkaOutbox(sender);
    }

    /** Reads the loop's published snapshot lazily, at scrape time: the loop is built with these meters. */
    @Bean(destroyMethod = "close")
    EngineMeters engineMeters(MeterRegistry registry, ObjectProvider<EngineLoop> loop) {
        return new EngineMeters(registry, () -> loop.getObject().snapshot());
    }

    @Bean
    EngineLoop engineLoop(ControlIdentity identity, WorkerProperties worker, EngineProperties engine, Outbox outbox,
            InboxPosition position, SetupDoneAcks acks, DeploymentConfig config, KernelCatalog kernels,
            WorkerDataPlane data, EngineMeters meters, MeterRegistry registry) {
        List<WorkerGraph> graphs = WorkerGraphSplit.split(config, ModelGraphs.of(config));
        return new EngineLoop(identity.self(), worker.setupDoneInterval(), outbox, position, acks,
                executor -> new WorkerEngine(identity.self(), engine, graphs, kernels, data.parts(), outbox, executor, meters,
                        KvCaches.of(config, registry, engine.kvHostPoolFactor())), meters);
    }

    @Bean
    EngineEndpoint engineEndpoint(EngineLoop loop) {
        return new EngineEndpoint(loop);
    }

    @Bean(destroyMethod = "close")
    TensorMeters tensorMeters(MeterRegistry registry, EngineLoop loop, WorkerDataPlane data) {
        return new TensorMeters(registry, () -> loop.snapshot().tensors(), List.of(data.device()));
    }
}
