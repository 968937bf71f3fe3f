// Command gentree writes a manifest repository of many small files, the
// shape a GitOps tree has, to measure `ladder check -f DIR` on it:
//
//	go run ./internal/insights/testdata/gentree -files 190000 -docs 200000 DIR
//
// Per app it writes a Deployment, its Service and ConfigMap, and now and
// then a PodDisruptionBudget; the first docs-files files hold two
// documents. With -findings, every Deployment has no PodDisruptionBudget,
// no readiness probe and no topology spread, and a removed Ingress and
// HorizontalPodAutoscaler beside it instead of the ConfigMap and the
// budget: five findings an app. The output is the same for the same flags.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	files := flag.Int("files", 190_000, "files to write")
	docs := flag.Int("docs", 200_000, "documents to write (at least -files)")
	findings := flag.Bool("findings", false, "make every other Deployment draw several findings")
	flag.Parse()
	if flag.NArg() != 1 || *docs < *files {
		fmt.Fprintln(os.Stderr, "usage: gentree [-files N] [-docs N] [-findings] DIR")
		os.Exit(2)
	}
	if err := write(flag.Arg(0), *files, *docs, *findings); err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
}

func write(dir string, files, docs int, findings bool) error {
	next := document(findings)
	for f := range files {
		sub := filepath.Join(dir, fmt.Sprintf("team-%03d", f/1000), fmt.Sprintf("svc-%02d", f/100%10))
		if f%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		data := next()
		if f < docs-files {
			data += "---\n" + next()
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("app-%06d.yaml", f)), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// document returns the documents of the corpus one by one.
func document(findings bool) func() string {
	app, part := 0, 0
	return func() string {
		ns, name := fmt.Sprintf("team-%d", app%50), fmt.Sprintf("app-%d", app)
		bad := findings
		var d string
		switch part {
		case 0:
			d = deployment(ns, name, bad)
		case 1:
			d = fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  selector: {app: %s}\n  ports:\n    - {name: http, port: 80, targetPort: 8080}\n", name, ns, name)
		case 2:
			if bad {
				d = fmt.Sprintf("apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  rules:\n    - http:\n        paths:\n          - path: /\n            backend: {serviceName: %s, servicePort: 80}\n", name, ns, name)
			} else {
				d = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  LOG_LEVEL: info\n  ENDPOINT: http://%s.%s.svc:80\n", name, ns, name, ns)
			}
		case 3:
			if bad {
				d = fmt.Sprintf("apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %s}\n  minReplicas: 2\n  maxReplicas: 10\n", name, ns, name)
				break
			}
			d = fmt.Sprintf("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels: {app: %s}\n", name, ns, name)
		}
		part++
		if part == 4 {
			part, app = 0, app+1
		}
		return d
	}
}

func deployment(ns, name string, bad bool) string {
	replicas, probe, spread := 3, "          readinessProbe:\n            httpGet: {path: /health, port: 8080}\n",
		"      topologySpreadConstraints:\n        - maxSkew: 1\n          topologyKey: topology.kubernetes.io/zone\n          whenUnsatisfiable: ScheduleAnyway\n          labelSelector:\n            matchLabels: {app: "+name+"}\n"
	if bad {
		replicas, probe, spread = 2, "", ""
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
  labels: {app: %[2]s, team: %[1]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s, tier: web}}
    spec:
      containers:
        - name: %[2]s
          image: public.ecr.aws/nginx/nginx:1.27
          ports: [{containerPort: 8080}]
          resources:
            requests: {cpu: 100m, memory: 128Mi}
%[4]s%[5]s`, ns, name, replicas, probe, spread)
}
