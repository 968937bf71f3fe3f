package render

import (
	"slices"
	"testing"
)

func TestTemplateLiterals(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []Literal
	}{{
		name: "both branches of a semverCompare, in an if",
		src: `{{- if .Values.ingress.enabled -}}
{{- if semverCompare ">=1.19-0" .Capabilities.KubeVersion.GitVersion -}}
apiVersion: networking.k8s.io/v1
{{- else -}}
apiVersion: extensions/v1beta1
{{- end }}
kind: Ingress
metadata:
  name: {{ include "x.fullname" . }}
{{- end }}
`,
		want: []Literal{
			{File: "t.yaml", Line: 3, APIVersion: "networking.k8s.io/v1", Kind: "Ingress",
				Branch: "the {{ if }} branch of a .Capabilities check at line 2"},
			{File: "t.yaml", Line: 5, APIVersion: "extensions/v1beta1", Kind: "Ingress",
				Branch: "the {{ else }} branch of a .Capabilities check at line 2"},
		},
	}, {
		name: "literals inside the value's actions, after a leading action",
		src: `{{- if .Values.legacy }}apiVersion: {{ if .Values.old }}extensions/v1beta1{{ else }}"apps/v1"{{ end }}
kind: Deployment
{{- end }}
`,
		want: []Literal{
			{File: "t.yaml", Line: 1, APIVersion: "extensions/v1beta1", Kind: "Deployment",
				Branch: "the {{ if }} branch of a .Values check at line 1"},
			{File: "t.yaml", Line: 1, APIVersion: "apps/v1", Kind: "Deployment",
				Branch: "the {{ else }} branch of a .Values check at line 1"},
		},
	}, {
		name: "a computed apiVersion is skipped",
		src: `apiVersion: {{ include "common.capabilities.deployment.apiVersion" . }}
kind: Deployment
`,
	}, {
		name: "nested keys and commented-out actions are not top level",
		src: `{{/*
apiVersion: extensions/v1beta1
kind: Deployment
*/}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
`,
		want: []Literal{{File: "t.yaml", Line: 5, APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"}},
	}, {
		name: "each document has its own kind; lines count across documents",
		src: `# leading comment
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
---
{{ .Values.key }}: value
apiVersion: batch/v1beta1
kind: CronJob
---
kind: ConfigMap
`,
		want: []Literal{
			{File: "t.yaml", Line: 2, APIVersion: "policy/v1beta1", Kind: "PodSecurityPolicy"},
			{File: "t.yaml", Line: 6, APIVersion: "batch/v1beta1", Kind: "CronJob"},
		},
	}, {
		name: "an action left open does not run away",
		src:  "apiVersion: v1\nkind: Secret\ndata: {{ .Values.x \n",
		want: []Literal{{File: "t.yaml", Line: 1, APIVersion: "v1", Kind: "Secret"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := TemplateLiterals("t.yaml", []byte(tc.src))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}
