package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
)

// remoteReference is a reference in a kustomization that kustomize would
// fetch over the network (a git clone or an HTTP GET).
type remoteReference struct {
	kustomization string // the kustomization file that names it
	field         string // the kustomization field, e.g. "resources"
	ref           string
}

// maxKustomizationDepth bounds the walk through bases. kustomize itself
// stops cycles ("cycle detected"); this bound only keeps the pre-scan below
// from following a cycle kustomize would reject anyway.
const maxKustomizationDepth = 64

// kustomizationTree is what ladder learns from reading a kustomization and
// the local kustomizations it names, before kustomize builds it.
type kustomizationTree struct {
	// consumed holds the kustomization files and the files they name that
	// are not resources (patches, generator inputs, transformer configs,
	// CRD schemas): files that are never objects of their own, even when
	// the build fails.
	consumed consumedSet
	// remote is the first reference kustomize would fetch from the network.
	remote *remoteReference
}

// scanKustomizations walks the kustomization at root and the local bases
// and components it names. kustomize's loader offers no way to switch
// network fetching off (internal/loader.FileLoader always carries a git
// cloner and an HTTP client), so ladder looks first and does not build when
// it finds a remote reference.
func scanKustomizations(root string) kustomizationTree {
	tree := kustomizationTree{consumed: consumedSet{}}
	seen := map[string]bool{}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		abs, err := filepath.Abs(dir)
		if err != nil || seen[abs] || depth > maxKustomizationDepth || tree.remote != nil {
			return
		}
		seen[abs] = true
		file := kustomizationFile(dir)
		if file == "" {
			return
		}
		tree.consumed.add(file)
		data, err := readCapped(file)
		if err != nil {
			return // kustomize reports it
		}
		var k types.Kustomization
		if k.Unmarshal(data) != nil {
			return // kustomize reports it
		}
		k.FixKustomization()
		for _, f := range kustomizationPaths(&k) {
			if isRemoteReference(f.ref) {
				f.kustomization = file
				tree.remote = &f
				return
			}
			if f.field != "resources" && f.field != "components" {
				tree.consumed.add(filepath.Join(dir, f.ref))
			}
		}
		for _, dirs := range [][]string{k.Resources, k.Components} {
			for _, d := range dirs {
				sub := filepath.Join(dir, d)
				if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
					walk(sub, depth+1)
				}
			}
		}
	}
	walk(root, 0)
	return tree
}

// kustomizationPaths lists the references of a kustomization that kustomize
// loads through its loader (ifc.Loader.New or Load) — every field of
// types.Kustomization that names a file, a directory or a URL.
func kustomizationPaths(k *types.Kustomization) []remoteReference {
	var out []remoteReference
	add := func(field string, refs ...string) {
		for _, r := range refs {
			if r != "" {
				out = append(out, remoteReference{field: field, ref: r})
			}
		}
	}
	add("resources", k.Resources...)
	add("components", k.Components...)
	add("crds", k.Crds...)
	add("configurations", k.Configurations...)
	add("generators", k.Generators...)
	add("transformers", k.Transformers...)
	add("validators", k.Validators...)
	add("openapi.path", k.OpenAPI["path"])
	for _, p := range k.Patches {
		add("patches.path", p.Path)
	}
	for _, p := range k.PatchesJson6902 {
		add("patchesJson6902.path", p.Path)
	}
	for _, p := range k.PatchesStrategicMerge {
		// An entry is either a path or an inline patch; only a one-line
		// entry can be a path.
		if !strings.Contains(string(p), "\n") {
			add("patchesStrategicMerge", string(p))
		}
	}
	for _, r := range k.Replacements {
		add("replacements.path", r.Path)
	}
	kv := func(field string, a types.GeneratorArgs) {
		for _, f := range a.FileSources {
			// "key=path" or "path" (kustomize's kv.ParseFileSource).
			if _, path, ok := strings.Cut(f, "="); ok {
				f = path
			}
			add(field+".files", f)
		}
		add(field+".envs", a.EnvSources...)
		add(field+".env", a.EnvSource)
	}
	for _, g := range k.ConfigMapGenerator {
		kv("configMapGenerator", g.GeneratorArgs)
	}
	for _, g := range k.SecretGenerator {
		kv("secretGenerator", g.GeneratorArgs)
	}
	return out
}

// isRemoteReference reports whether kustomize would fetch ref rather than
// read it from disk. It is a superset of kustomize's own tests:
// internal/loader.IsRemoteFile (an http or https URL, fetched with GET) and
// internal/git.NewRepoSpecFromURL (a URL with a scheme, an SCP-style
// user@host:path, a github.com path, optionally behind "git::"; cloned with
// the git binary).
func isRemoteReference(ref string) bool {
	r := strings.ToLower(strings.TrimSpace(ref))
	r = strings.TrimPrefix(r, "git::")
	if strings.Contains(r, "://") {
		return true
	}
	if strings.HasPrefix(r, "github.com") || strings.HasPrefix(r, "gh:") {
		return true
	}
	// user@host:path — an '@' in the first path segment.
	first, _, _ := strings.Cut(r, "/")
	return strings.Contains(first, "@")
}

func (r remoteReference) problem() Problem {
	return Problem{
		File:    r.kustomization,
		Line:    lineContaining(r.kustomization, r.ref),
		Message: fmt.Sprintf("kustomize build not run: %s entry %q is remote, and ladder does not fetch over the network", r.field, r.ref),
		Fix:     "vendor the remote base into the repository (or check out the referenced tree) and point the kustomization at the local copy",
		// Not a fault of the manifests: what they need is not here.
		Warning: true,
	}
}

// lineContaining is the 1-based line of the first line of file that holds s,
// or 1.
func lineContaining(file, s string) int {
	data, err := readCapped(file)
	if err != nil {
		return 1
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return 1
}
