// Package render builds the directories `ladder check` finds that are not
// plain manifests — a kustomization and a Helm chart — the way the user's own
// tools build them, so the checks judge the objects that reach the cluster
// rather than the sources that make them.
//
// Contract for the caller (the directory walk of `ladder check`):
//
//   - Kind(dir) says whether dir is a kustomization root (kustomization.yaml,
//     kustomization.yml or Kustomization, as kustomize's konfig.RecognizedKustomizationFileNames)
//     or a Helm chart (Chart.yaml). A directory holding both is a chart.
//   - Kustomize(dir) builds dir as `kubectl apply -k dir` does (kustomize's
//     krusty API, legacy resource order, files only from under the root,
//     no plugins, no exec, no network). Helm(dir, opts) renders dir as
//     `helm template` does (Helm's own install action in client-only mode).
//   - Result.Docs are the rendered objects, one YAML document each, in the
//     order the tool prints them, each with its ORIGIN: the source file (a
//     path joined onto dir as the caller gave it) and the 1-based line of the
//     object's document in that file (1 when it cannot be found). Tool-internal
//     annotations (config.kubernetes.io/origin, the transformer annotations)
//     are removed from the bodies.
//   - Result.Consumed lists every file the render read: kustomization files,
//     resources, patches, components, generator inputs, Chart.yaml,
//     values files, templates. The walk must not judge these as whole objects
//     (a strategic-merge patch `Deployment` with no selector is not a
//     workload); it may still scan them for API versions only.
//   - Result.Problems are findings about the render itself (a missing base, a
//     remote base that ladder will not fetch, a template that does not
//     execute, a missing chart dependency): one line each, naming file:line,
//     what went wrong and what to do. When a build fails, Docs is empty; the
//     raw files are then the walk's to scan for API versions.
//   - Result.Literals are the literal apiVersion/kind pairs found in chart
//     template sources that did not render (TemplateLiterals), so a removed
//     API in a chart's sources is found even when the chart cannot be built.
//   - The error return is for the caller's own mistakes (dir is not a
//     kustomization or chart, bad options); anything wrong in the user's files
//     is a Problem.
//
// Everything is deterministic: the same files and options give byte-identical
// Results. Hostile input is bounded: files over MaxFileBytes, symlink loops
// and recursive kustomization bases become Problems, never hangs or panics.
// A chart reads only files under its own directory (a symbolic link that
// leads outside it is a Problem; Helm loads the chart from files ladder
// read). Each render runs in a process of its own — the running
// executable started again (sandbox.go), so any binary that links this
// package serves renders when started with LADDER_RENDER_CHILD set — under
// the budgets RenderTime, RenderOutputBytes, RenderMemoryBytes and
// RenderStackBytes; a render that runs out of one is a Problem naming it.
package render
