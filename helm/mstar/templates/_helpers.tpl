{{/* Object name prefix: "<release>-mstar", or the release name alone when it already contains the chart name. */}}
{{- define "mstar.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "mstar.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mstar.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "mstar.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mstar
{{- end -}}

{{/* Selector labels of one component; call with (dict "ctx" $ "component" "worker"). */}}
{{- define "mstar.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mstar.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "mstar.conductor.fullname" -}}{{ include "mstar.fullname" . }}-conductor{{- end -}}
{{- define "mstar.worker.fullname" -}}{{ include "mstar.fullname" . }}-worker{{- end -}}
{{- define "mstar.kafka.fullname" -}}{{ include "mstar.fullname" . }}-kafka{{- end -}}
{{- define "mstar.config.fullname" -}}{{ include "mstar.fullname" . }}-deployment-config{{- end -}}

{{- define "mstar.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mstar.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "mstar.adminTokenSecretName" -}}
{{- if .Values.adminToken.existingSecret -}}
{{- .Values.adminToken.existingSecret -}}
{{- else -}}
{{- include "mstar.fullname" . }}-admin-token
{{- end -}}
{{- end -}}

{{/* The data-plane secret every conductor and worker pod mounts (dataPlane.*). */}}
{{- define "mstar.dataPlaneSecretName" -}}
{{- if .Values.dataPlane.existingSecret -}}
{{- .Values.dataPlane.existingSecret -}}
{{- else -}}
{{- include "mstar.fullname" . }}-data-plane
{{- end -}}
{{- end -}}

{{/* Whether tensor reads are authenticated with grants (then the data-plane secret is mounted). */}}
{{- define "mstar.dataPlane.grants" -}}
{{- if eq .Values.dataPlane.authentication "grants" -}}true{{- end -}}
{{- end -}}

{{/*
TLS on the data port (dataPlane.tls.*): the kubernetes.io/tls Secret every conductor and worker pod mounts at
/etc/mstar/data-tls. The schema requires secretName when enabled; this holds under --skip-schema-validation too.
*/}}
{{- define "mstar.dataPlaneTls.secretName" -}}
{{- required "dataPlane.tls.secretName is required when dataPlane.tls.enabled is true: name a kubernetes.io/tls Secret (tls.crt, tls.key, optional ca.crt) in the release's namespace" .Values.dataPlane.tls.secretName -}}
{{- end -}}

{{/* The keys of the TLS Secret the pods mount: the certificate, its key and, with caKey, the CA bundle. */}}
{{- define "mstar.dataPlaneTls.keys" -}}
{{- if eq .Values.dataPlane.tls.caKey "tls.key" -}}
{{- fail "dataPlane.tls.caKey names the CA bundle readers trust (e.g. ca.crt), not the private key tls.key; leave it empty to trust tls.crt" -}}
{{- end -}}
{{- list "tls.crt" "tls.key" .Values.dataPlane.tls.caKey | compact | uniq | join "," -}}
{{- end -}}

{{/* image reference; call with (dict "ctx" $ "image" .Values.worker.image). */}}
{{- define "mstar.image" -}}
{{- printf "%s:%s" .image.repository (default .ctx.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{- define "mstar.kafka.bootstrapServers" -}}
{{- if eq .Values.kafka.mode "external" -}}
{{- required "kafka.external.bootstrapServers is required when kafka.mode is external" .Values.kafka.external.bootstrapServers -}}
{{- else -}}
{{- printf "%s:9092" (include "mstar.kafka.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
The worker ids named by deploymentConfig must be exactly 0..worker.replicas-1: a StatefulSet pod's
ordinal is its worker id, so a missing id would never start and an extra pod would be ignored.
*/}}
{{- define "mstar.validateWorkers" -}}
{{- $config := fromYaml .Values.deploymentConfig -}}
{{- if hasKey $config "Error" -}}
{{- fail (printf "deploymentConfig is not valid YAML: %s" (get $config "Error")) -}}
{{- end -}}
{{- $ids := dict -}}
{{- range $model := ($config.models | default list) -}}
{{- range $group := ($model.node_groups | default list) -}}
{{- range $w := ($group.workers | default list) -}}
{{- $_ := set $ids (toString $w) true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $replicas := int .Values.worker.replicas -}}
{{- if ne (len $ids) $replicas -}}
{{- fail (printf "deploymentConfig names %d distinct worker ids %v but worker.replicas is %d; they must match" (len $ids) (keys $ids | sortAlpha) $replicas) -}}
{{- end -}}
{{- range $i := until $replicas -}}
{{- if not (hasKey $ids (toString $i)) -}}
{{- fail (printf "deploymentConfig must name worker ids 0..%d (the StatefulSet ordinals); %d is missing" (sub $replicas 1) $i) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Environment shared by the conductor and the workers: Kafka, messaging, deployment config, data-plane authentication and TLS. */}}
{{- define "mstar.commonEnv" -}}
- name: SPRING_KAFKA_BOOTSTRAP_SERVERS
  value: {{ include "mstar.kafka.bootstrapServers" . | quote }}
- name: MSTAR_MESSAGING_TOPIC_PREFIX
  value: {{ .Values.messaging.topicPrefix | quote }}
- name: MSTAR_MESSAGING_PARTITIONS
  value: {{ .Values.messaging.partitions | quote }}
- name: MSTAR_MESSAGING_REPLICATION_FACTOR
  value: {{ .Values.messaging.replicationFactor | quote }}
- name: MSTAR_DEPLOYMENT_CONFIG
  value: /etc/mstar/deployment/deployment.yaml
# Every pod of the release signs and checks tensor reads with the same secret (docs/security.md).
- name: MSTAR_DATA_PLANE_AUTHENTICATION
  value: {{ .Values.dataPlane.authentication | quote }}
{{- if include "mstar.dataPlane.grants" . }}
- name: MSTAR_DATA_PLANE_SECRET_FILE
  value: "/etc/mstar/data-plane/{{ .Values.dataPlane.secretKey }}"
{{- end }}
{{- $tls := .Values.dataPlane.tls }}
{{- if $tls.enabled }}
# Every pod of the release serves and reads tensors over HTTPS only, with the same mounted certificate.
- name: MSTAR_DATA_PLANE_TLS_ENABLED
  value: "true"
- name: MSTAR_DATA_PLANE_TLS_CERTIFICATE_FILE
  value: /etc/mstar/data-tls/tls.crt
- name: MSTAR_DATA_PLANE_TLS_PRIVATE_KEY_FILE
  value: /etc/mstar/data-tls/tls.key
{{- if $tls.caKey }}
- name: MSTAR_DATA_PLANE_TLS_TRUST_FILE
  value: "/etc/mstar/data-tls/{{ $tls.caKey }}"
{{- end }}
{{- if $tls.serverName }}
# The conductor advertises its pod IP: readers verify every data-plane certificate against this name instead.
- name: MSTAR_DATA_PLANE_TLS_SERVER_NAME
  value: {{ $tls.serverName | quote }}
{{- end }}
{{- end }}
{{- if eq .Values.kafka.mode "external" }}
{{- $ext := .Values.kafka.external }}
- name: SPRING_KAFKA_SECURITY_PROTOCOL
  value: {{ $ext.securityProtocol | quote }}
{{- if $ext.tls.caSecret }}
- name: SPRING_KAFKA_SSL_TRUST_STORE_TYPE
  value: PEM
- name: SPRING_KAFKA_SSL_TRUST_STORE_LOCATION
  value: "file:/etc/mstar/kafka-tls/{{ $ext.tls.caKey }}"
{{- end }}
{{- if hasPrefix "SASL_" $ext.securityProtocol }}
- name: KAFKA_SASL_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ required "kafka.external.sasl.existingSecret is required with a SASL_* securityProtocol" $ext.sasl.existingSecret }}
      key: {{ $ext.sasl.usernameKey }}
- name: KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $ext.sasl.existingSecret }}
      key: {{ $ext.sasl.passwordKey }}
- name: SPRING_KAFKA_PROPERTIES_SASL_MECHANISM
  value: {{ $ext.sasl.mechanism | quote }}
{{- $module := ternary "org.apache.kafka.common.security.plain.PlainLoginModule" "org.apache.kafka.common.security.scram.ScramLoginModule" (eq $ext.sasl.mechanism "PLAIN") }}
# $(VAR) is expanded by the kubelet, so the password never appears in the pod spec.
- name: SPRING_KAFKA_PROPERTIES_SASL_JAAS_CONFIG
  value: {{ printf "%s required username=\"$(KAFKA_SASL_USERNAME)\" password=\"$(KAFKA_SASL_PASSWORD)\";" $module | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Volumes every mstar pod mounts: the deployment config, a writable /tmp, the data-plane secret (with grants), its TLS Secret (with dataPlane.tls.enabled) and the Kafka CA if any. */}}
{{- define "mstar.commonVolumes" -}}
- name: deployment-config
  configMap:
    name: {{ include "mstar.config.fullname" . }}
- name: tmp
  emptyDir: {}
{{- if include "mstar.dataPlane.grants" . }}
- name: data-plane
  secret:
    secretName: {{ include "mstar.dataPlaneSecretName" . }}
    defaultMode: 0440
    items:
      - key: {{ .Values.dataPlane.secretKey }}
        path: {{ .Values.dataPlane.secretKey }}
{{- end }}
{{- if .Values.dataPlane.tls.enabled }}
# Group-readable only: the pod's fsGroup (podSecurityContext) is what lets the container's user read the key.
- name: data-tls
  secret:
    secretName: {{ include "mstar.dataPlaneTls.secretName" . }}
    defaultMode: 0440
    items:
      {{- range $key := splitList "," (include "mstar.dataPlaneTls.keys" .) }}
      - key: {{ $key }}
        path: {{ $key }}
      {{- end }}
{{- end }}
{{- if and (eq .Values.kafka.mode "external") .Values.kafka.external.tls.caSecret }}
- name: kafka-tls
  secret:
    secretName: {{ .Values.kafka.external.tls.caSecret }}
{{- end }}
{{- end -}}

{{- define "mstar.commonVolumeMounts" -}}
- name: deployment-config
  mountPath: /etc/mstar/deployment
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- if include "mstar.dataPlane.grants" . }}
- name: data-plane
  mountPath: /etc/mstar/data-plane
  readOnly: true
{{- end }}
{{- if .Values.dataPlane.tls.enabled }}
- name: data-tls
  mountPath: /etc/mstar/data-tls
  readOnly: true
{{- end }}
{{- if and (eq .Values.kafka.mode "external") .Values.kafka.external.tls.caSecret }}
- name: kafka-tls
  mountPath: /etc/mstar/kafka-tls
  readOnly: true
{{- end }}
{{- end -}}

{{/* Actuator probes; call with (dict "port" "http" "startup" .Values.worker.startupProbe). */}}
{{- define "mstar.probes" -}}
startupProbe:
  httpGet:
    path: /actuator/health/liveness
    port: {{ .port }}
  periodSeconds: {{ .startup.periodSeconds }}
  failureThreshold: {{ .startup.failureThreshold }}
livenessProbe:
  httpGet:
    path: /actuator/health/liveness
    port: {{ .port }}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /actuator/health/readiness
    port: {{ .port }}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}

{{/*
preStop sleep, then SIGTERM starts Spring's graceful shutdown (bounded by shutdownSeconds); the grace
period covers both plus a margin for the JVM to exit. Call with the component's drain values.
*/}}
{{- define "mstar.terminationGracePeriodSeconds" -}}
{{- add .preStopSeconds .shutdownSeconds 10 -}}
{{- end -}}
