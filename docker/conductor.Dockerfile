# The conductor: a plain JRE image. Build from the repository root after `mvn -DskipTests package`:
#   docker build -f docker/conductor.Dockerfile -t mstar/conductor .
FROM eclipse-temurin:17-jre-jammy

RUN apt-get update \
 && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin mstar

COPY --chown=10001:10001 conductor-service/target/conductor-service-exec.jar /opt/mstar/conductor.jar

USER 10001
EXPOSE 8080
# Readiness, not liveness: a container is healthy only once every configured worker is set up.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD curl -fsS http://127.0.0.1:8080/actuator/health/readiness || exit 1
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/mstar/conductor.jar"]
