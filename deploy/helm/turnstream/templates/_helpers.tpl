{{/* Names, labels and the pieces every component's pod shares. */}}

{{- define "turnstream.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<component>"; call with (list $ "worker") */}}
{{- define "turnstream.componentName" -}}
{{- $root := index . 0 -}}
{{- printf "%s-%s" (include "turnstream.fullname" $root) (index . 1) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "turnstream.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ $root.Chart.Name }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "turnstream.labels" -}}
{{ include "turnstream.selectorLabels" . }}
{{- $root := index . 0 }}
app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "turnstream.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* A setting's value from .Values.settings, or the default given: (list $ "TURNSTREAM_X" "default") */}}
{{- define "turnstream.setting" -}}
{{- $root := index . 0 -}}
{{- $value := index $root.Values.settings (index . 1) -}}
{{- if kindIs "invalid" $value -}}{{ index . 2 }}{{- else -}}{{ $value }}{{- end -}}
{{- end -}}

{{- define "turnstream.partitions" -}}
{{- include "turnstream.setting" (list . "TURNSTREAM_TURN_PARTITIONS" "8") | int -}}
{{- end -}}

{{- define "turnstream.topicPrefix" -}}
{{- include "turnstream.setting" (list . "TURNSTREAM_TOPIC_PREFIX" "turnstream") -}}
{{- end -}}

{{/* The env of every container: the settings' ConfigMap, then each secret from its existing Secret. */}}
{{- define "turnstream.envFrom" -}}
- configMapRef:
    name: {{ include "turnstream.fullname" . }}
{{- end -}}

{{- define "turnstream.secretEnv" -}}
{{- $s := .Values.secrets -}}
{{- if $s.kafkaSasl.name }}
- name: TURNSTREAM_KAFKA_SASL_USERNAME
  valueFrom: {secretKeyRef: {name: {{ $s.kafkaSasl.name | quote }}, key: {{ $s.kafkaSasl.usernameKey | quote }}}}
- name: TURNSTREAM_KAFKA_SASL_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $s.kafkaSasl.name | quote }}, key: {{ $s.kafkaSasl.passwordKey | quote }}}}
{{- end }}
{{- include "turnstream.redisSecretEnv" . }}
{{- if $s.openai.name }}
- name: OPENAI_API_KEY
  valueFrom: {secretKeyRef: {name: {{ $s.openai.name | quote }}, key: {{ $s.openai.key | quote }}}}
{{- end }}
{{- end -}}

{{/* The Redis password alone: the inspector reads Redis only. */}}
{{- define "turnstream.redisSecretEnv" -}}
{{- if .Values.secrets.redis.name }}
- name: TURNSTREAM_REDIS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .Values.secrets.redis.name | quote }}, key: {{ .Values.secrets.redis.passwordKey | quote }}}}
{{- end }}
{{- end -}}

{{- define "turnstream.tokensEnv" -}}
{{- if .Values.secrets.serveTokens.name }}
- name: TURNSTREAM_SERVE_TOKENS
  valueFrom: {secretKeyRef: {name: {{ .Values.secrets.serveTokens.name | quote }}, key: {{ .Values.secrets.serveTokens.key | quote }}}}
{{- end }}
{{- end -}}

{{/* The pod-level fields every component shares: (list $ .Values.<component>) */}}
{{- define "turnstream.podCommon" -}}
{{- $root := index . 0 -}}
{{- $c := index . 1 -}}
automountServiceAccountToken: false
terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* A PodDisruptionBudget for a component: (list $ "serve" .Values.serve) */}}
{{- define "turnstream.pdb" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $c := index . 2 -}}
{{- if and $c.enabled $c.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "turnstream.componentName" (list $root $name) }}
  labels:
    {{- include "turnstream.labels" (list $root $name) | nindent 4 }}
spec:
  maxUnavailable: {{ $c.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "turnstream.selectorLabels" (list $root $name) | nindent 6 }}
{{- end }}
{{- end -}}
