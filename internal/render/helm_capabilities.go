package render

import (
	"context"
	"slices"
	"strings"
	"sync"
	"text/template/parse"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/engine"
	ri "helm.sh/helm/v4/pkg/release"
)

// targetCapabilities is the .Capabilities a chart renders with: Helm's
// defaults (common.DefaultCapabilities, as `helm template`), the
// KubeVersion given, and, when apiVersions is not nil, exactly those API
// versions instead of Helm's DefaultVersionSet (every group-version
// client-go knows, whatever the Kubernetes version, and no kinds).
func targetCapabilities(kubeVersion *common.KubeVersion, apiVersions []string) *common.Capabilities {
	caps := common.DefaultCapabilities.Copy()
	if kubeVersion != nil {
		caps.KubeVersion = *kubeVersion
	}
	if apiVersions != nil {
		caps.APIVersions = common.VersionSet(slices.Clone(apiVersions))
	}
	return caps
}

// defaultCapabilitiesMu serialises the renders that replace Helm's
// default capabilities (installWithCapabilities).
var defaultCapabilitiesMu sync.Mutex

// installWithCapabilities runs a client-only install with caps as the
// chart's .Capabilities. Helm's install action in client-only mode starts
// from common.DefaultCapabilities and can only add API versions to it
// (pkg/action/install.go: Install.APIVersions are appended, as `helm
// template --api-versions` does), never drop the ones the target no longer
// serves; so, for the render, the package's default is the target's, and
// is put back after. Renders that do so run one at a time.
func installWithCapabilities(ctx context.Context, install *action.Install, ch chart.Charter, vals map[string]any, caps *common.Capabilities) (ri.Releaser, error) {
	defaultCapabilitiesMu.Lock()
	defer defaultCapabilitiesMu.Unlock()
	saved := common.DefaultCapabilities
	common.DefaultCapabilities = caps
	defer func() { common.DefaultCapabilities = saved }()
	return install.RunWithContext(ctx, ch, vals)
}

// capabilityDecider answers, for the pipeline of a template's {{ if }},
// whether the chart rendered with caps takes its then-branch, when that
// depends on .Capabilities alone. ok is false when it cannot say.
func capabilityDecider(caps *common.Capabilities) func(cond string) (taken, ok bool) {
	cache := map[string][2]bool{}
	return func(cond string) (bool, bool) {
		if r, hit := cache[cond]; hit {
			return r[0], r[1]
		}
		taken, ok := decideCondition(caps, cond)
		cache[cond] = [2]bool{taken, ok}
		return taken, ok
	}
}

// decideCondition reads the condition as three-valued logic over `and`,
// `or` and `not` (Go's text/template builtins), so
// `and .Values.rbac.pspEnabled (.Capabilities.APIVersions.Has
// "policy/v1beta1/PodSecurityPolicy")` is false on a target that does not
// serve the PodSecurityPolicy whatever the values say; every other term is
// evaluated as a whole (evalCapabilities).
func decideCondition(caps *common.Capabilities, cond string) (taken, ok bool) {
	t := parse.New("condition")
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse("{{ if "+cond+" }}{{ end }}", "", "", map[string]*parse.Tree{}); err != nil || t.Root == nil || len(t.Root.Nodes) != 1 {
		return false, false
	}
	n, isIf := t.Root.Nodes[0].(*parse.IfNode)
	if !isIf {
		return false, false
	}
	return decidePipe(caps, n.Pipe)
}

func decidePipe(caps *common.Capabilities, p *parse.PipeNode) (bool, bool) {
	if len(p.Decl) == 0 && len(p.Cmds) == 1 {
		return decideCommand(caps, p.Cmds[0])
	}
	return evalCapabilities(caps, p.String())
}

func decideCommand(caps *common.Capabilities, c *parse.CommandNode) (bool, bool) {
	if id, isIdent := c.Args[0].(*parse.IdentifierNode); isIdent && len(c.Args) > 1 {
		switch id.Ident {
		case "not":
			if len(c.Args) == 2 {
				v, ok := decideArg(caps, c.Args[1])
				return !v, ok
			}
		case "and", "or":
			// and: false as soon as one term is false; true when all are.
			// or: the same with true and false swapped.
			settles := id.Ident == "or"
			all := true
			for _, a := range c.Args[1:] {
				v, ok := decideArg(caps, a)
				if ok && v == settles {
					return settles, true
				}
				all = all && ok
			}
			if !all {
				return false, false
			}
			return !settles, true
		}
	}
	return evalCapabilities(caps, c.String())
}

func decideArg(caps *common.Capabilities, n parse.Node) (bool, bool) {
	if p, isPipe := n.(*parse.PipeNode); isPipe {
		return decidePipe(caps, p)
	}
	return evalCapabilities(caps, n.String())
}

// undecidable are what a term may read that the evaluation's context
// would answer wrongly (its stand-in chart's metadata and files) or that
// Helm answers emptily without a cluster (lookup).
var undecidable = []string{".Chart", ".Files", ".Template", ".Subcharts", "lookup", "tpl", "include"}

// evalCapabilities evaluates one term that reads .Capabilities with Helm's
// own engine (its functions: semverCompare, ...) in strict mode, on a
// context that holds only .Capabilities: a term that also reads .Values,
// .Release or a variable fails and is not decided.
func evalCapabilities(caps *common.Capabilities, term string) (taken, ok bool) {
	if !strings.Contains(term, ".Capabilities") {
		return false, false
	}
	for _, u := range undecidable {
		if strings.Contains(term, u) {
			return false, false
		}
	}
	const name = "templates/condition"
	ch := &chartv2.Chart{
		Metadata:  &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: "condition", Version: "0.0.0"},
		Templates: []*common.File{{Name: name, Data: []byte("{{ if " + term + " }}then{{ else }}else{{ end }}")}},
	}
	out, err := engine.Engine{Strict: true}.Render(ch, common.Values{"Capabilities": caps})
	if err != nil {
		return false, false
	}
	switch out["condition/"+name] {
	case "then":
		return true, true
	case "else":
		return false, true
	}
	return false, false
}
