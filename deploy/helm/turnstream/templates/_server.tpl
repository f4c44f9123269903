{{/* The Deployment, Service and PodDisruptionBudget of one HTTP server (serve, mcp, inspect):
     (dict "root" $ "name" "serve" "c" .Values.serve "args" (list ...) "env" "<yaml list>" "http" true
     "redisOnly" false: only the Redis password of the secrets) */}}
{{- define "turnstream.server" -}}
{{- $root := .root -}}
{{- $c := .c -}}
{{- $name := include "turnstream.componentName" (list $root .name) }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "turnstream.labels" (list $root .name) | nindent 4 }}
spec:
  replicas: {{ $c.replicas }}
  selector:
    matchLabels:
      {{- include "turnstream.selectorLabels" (list $root .name) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "turnstream.labels" (list $root .name) | nindent 8 }}
      annotations:
        checksum/settings: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if .http }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $c.port | quote }}
        {{- end }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "turnstream.podCommon" (list $root $c) | nindent 6 }}
      containers:
        - name: {{ .name }}
          image: {{ include "turnstream.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: {{ toJson .args }}
          envFrom:
            {{- include "turnstream.envFrom" $root | nindent 12 }}
          env:
            {{- .env | trim | nindent 12 }}
            {{- with include (ternary "turnstream.redisSecretEnv" "turnstream.secretEnv" (default false .redisOnly)) $root | trim }}{{ . | nindent 12 }}{{ end }}
          ports:
            - {name: http, containerPort: {{ $c.port }}}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          {{- if .http }}
          livenessProbe:
            httpGet: {path: /livez, port: http}
            {{- toYaml $c.livenessProbe | nindent 12 }}
          readinessProbe:
            httpGet: {path: /readyz, port: http}
            {{- toYaml $c.readinessProbe | nindent 12 }}
          {{- else }}
          # every path of this server asks for a bearer token, so the probes check that it listens
          livenessProbe:
            tcpSocket: {port: http}
            {{- toYaml $c.livenessProbe | nindent 12 }}
          readinessProbe:
            tcpSocket: {port: http}
            {{- toYaml $c.readinessProbe | nindent 12 }}
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          volumeMounts:
            - {name: tmp, mountPath: /tmp}
      volumes:
        - {name: tmp, emptyDir: {}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "turnstream.labels" (list $root .name) | nindent 4 }}
spec:
  type: {{ $c.service.type }}
  selector:
    {{- include "turnstream.selectorLabels" (list $root .name) | nindent 4 }}
  ports:
    - {name: http, port: {{ $c.service.port }}, targetPort: http}
{{- include "turnstream.pdb" (list $root .name $c) }}
{{- end -}}
