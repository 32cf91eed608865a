# A worker: CUDA runtime base (the driver comes from the node), a JRE on top.
# Build from the repository root after `mvn -DskipTests package`:
#   docker build -f docker/worker.Dockerfile -t mstar/worker .
# The CUDA 13 runtime image carries the shared libraries the worker's JNI bindings load from the system's library
# folders: libcudart.so.13, libcublas.so.13 and libcublasLt.so.13 (cuBLAS, through the JavaCPP CUDA presets: minilm-embed's
# products) and libnccl.so.2 (tensor-parallel collectives). JCuda's driver binding needs only the node's libcuda.so.1.
FROM nvidia/cuda:13.0.0-runtime-ubuntu24.04

RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin mstar

COPY --chown=10001:10001 worker-service/target/worker-service-exec.jar /opt/mstar/worker.jar

# NVLink multicast stays off in NCCL: it can put a shared host's GPUs out of service, and NcclCollective.join
# refuses to run without this (docs/tensor-runtime.md#collectives).
ENV NCCL_NVLS_ENABLE=0

USER 10001
EXPOSE 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD curl -fsS http://127.0.0.1:8081/actuator/health/liveness || exit 1
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/mstar/worker.jar"]
