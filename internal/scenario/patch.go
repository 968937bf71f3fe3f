package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// Apply patches an object as kubectl patch does and returns the patched
// JSON: a JSON merge patch (RFC 7386, kubectl patch --type merge), a
// strategic merge patch (built-in kinds, with their patch strategies) or a
// JSON patch (RFC 6902). Validation dry-runs it to check the result; the
// rehearsal applies it: both compute the same bytes.
func (p *PatchAction) Apply(o manifest.Object) ([]byte, error) {
	original, err := json.Marshal(o.Object)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch p.Type {
	case "", "merge":
		patched, err = jsonpatch.MergePatch(original, p.Patch)
	case "json":
		if !isJSONList(p.Patch) {
			return nil, fmt.Errorf("a json patch (RFC 6902) is a list of operations such as [{op: replace, path: /spec/replicas, value: 3}]; to merge a map, use type: merge")
		}
		var ops jsonpatch.Patch
		if ops, err = jsonpatch.DecodePatch(p.Patch); err == nil {
			patched, err = ops.Apply(original)
		}
	case "strategic":
		typed, terr := scheme.Scheme.New(o.GVK)
		if terr != nil {
			return nil, fmt.Errorf("a strategic merge patch needs a built-in kind; use type: merge for %s", p.Kind)
		}
		patched, err = strategicpatch.StrategicMergePatch(original, p.Patch, typed)
	default:
		return nil, fmt.Errorf("patch type %q is not merge, strategic or json", p.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("patching %s %s: %v", p.Kind, p.Name, err)
	}
	return patched, nil
}

func isJSONList(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '['
}
