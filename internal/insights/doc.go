// Package insights is `ladder check`: it finds what will break or block the
// next upgrade hop before it happens, as EKS Upgrade Insights does, for
// manifests as well as clusters.
//
// The pieces, one concept per file:
//   - sources.go, decode.go: manifests from files, directories and stdin —
//     multi-document YAML, JSON, List kinds, any kind — into Objects that
//     remember file:line, streamed; documents that do not parse become
//     Problems and the scan goes on, files that are not manifests are
//     skipped and counted. The YAML reading (splitting, the fast YAML→JSON
//     converter, input limits) is internal/manifest's; jsonhead.go scans
//     the JSON head fast.
//   - input.go, workloads.go: the Input the checks read (objects, versions,
//     cluster facts) and its shared indexes (workloads, HPAs, PDBs).
//   - check.go, run.go: the Check interface and registry, and Run, which runs
//     the checks whose needs the input meets and sorts the findings.
//   - one file per check (removed_api.go, pdb_blocks_drain.go, ...), each a
//     pure function of the input with a table test of real manifests.
//   - output.go: the text table, JSON and SARIF.
//   - deprecations/: the reviewed table of deprecated and removed APIs.
//
// docs/check.md documents every check, its severity rule and the exit codes.
package insights
