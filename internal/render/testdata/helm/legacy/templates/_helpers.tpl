{{/* Expand the name of the chart. */}}
{{- define "legacy.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "legacy.fullname" -}}
{{- printf "%s-%s" .Release.Name (include "legacy.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
