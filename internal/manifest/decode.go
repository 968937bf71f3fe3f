// Package manifest decodes real Kubernetes and Karpenter manifests — the YAML
// or JSON a user would kubectl apply — into the upstream Go types, strictly,
// and remembers where each object came from so errors can say file:line.
//
// Decoding follows kubectl: a stream is split into documents at lines that
// are exactly "---" (k8s.io/apimachinery/pkg/util/yaml), YAML becomes JSON
// as sigs.k8s.io/yaml converts it (Converter, which has a fast path for
// block-style YAML), and the JSON is decoded with sigs.k8s.io/json's
// strict mode — unknown and duplicate fields are errors, as the API server's
// strict field validation makes them.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/scheme"
	kjson "sigs.k8s.io/json"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	yaml3 "gopkg.in/yaml.v3"

	"github.com/ladder-eks/ladder/internal/termtext"
)

// Source says where an object was read from.
type Source struct {
	File string // path as given by the user, or a name such as "scenario karpenter-drift"
	Line int    // 1-based line of the document's first line in File
}

func (s Source) String() string {
	if s.Line <= 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// Object is one decoded manifest.
type Object struct {
	Source Source
	GVK    schema.GroupVersionKind
	// Object is the typed upstream object (*appsv1.Deployment, *karpv1.NodePool, ...),
	// nil when Ignored.
	Object metav1.Object
	// Ignored is true for built-in kinds the twin does not model (Service,
	// ConfigMap, ...): they parse, but do not change a rehearsal.
	Ignored bool
	// doc keeps the YAML so later validation can point at a field's line.
	doc []byte
}

// Document returns the object's YAML document as written.
func (o Object) Document() []byte { return o.doc }

// Name is "Kind namespace/name" (or "Kind name" for cluster-scoped objects).
func (o Object) Name() string {
	if o.Object == nil || o.Object.GetName() == "" {
		return o.GVK.Kind
	}
	if ns := o.Object.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", o.GVK.Kind, ns, o.Object.GetName())
	}
	return fmt.Sprintf("%s %s", o.GVK.Kind, o.Object.GetName())
}

// FieldError builds an error about one field of this object, pointing at the
// field's line when it can be found.
func (o Object) FieldError(field, msg, fix string) *Error {
	src := o.Source
	if line := LineOf(o.doc, field); line > 0 {
		src.Line = o.Source.Line + line - 1
	}
	return &Error{Source: src, Object: o.Name(), Field: field, Msg: msg, Fix: fix}
}

// Error is a one-line, actionable decoding or validation error.
type Error struct {
	Source Source
	Object string // "Deployment checkout/checkout"; empty if unknown
	Field  string // "spec.replicas"; empty if the whole document is wrong
	Msg    string
	Fix    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source.String())
	b.WriteString(": ")
	if e.Object != "" {
		b.WriteString(e.Object)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString(" (")
		b.WriteString(e.Fix)
		b.WriteString(")")
	}
	// One line, inert on a terminal: the object's name and the values
	// come from the manifest (termtext).
	return termtext.Escape(b.String())
}

var (
	karpenterGV    = schema.GroupVersion{Group: "karpenter.sh", Version: "v1"}
	karpenterAWSGV = schema.GroupVersion{Group: "karpenter.k8s.aws", Version: "v1"}
)

// modelled maps the kinds the twin understands to their upstream Go types.
var modelled = map[schema.GroupVersionKind]func() metav1.Object{
	corev1.SchemeGroupVersion.WithKind("Namespace"):             func() metav1.Object { return &corev1.Namespace{} },
	corev1.SchemeGroupVersion.WithKind("Pod"):                   func() metav1.Object { return &corev1.Pod{} },
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): func() metav1.Object { return &corev1.PersistentVolumeClaim{} },
	corev1.SchemeGroupVersion.WithKind("PersistentVolume"):      func() metav1.Object { return &corev1.PersistentVolume{} },
	appsv1.SchemeGroupVersion.WithKind("Deployment"):            func() metav1.Object { return &appsv1.Deployment{} },
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"):           func() metav1.Object { return &appsv1.StatefulSet{} },
	appsv1.SchemeGroupVersion.WithKind("DaemonSet"):             func() metav1.Object { return &appsv1.DaemonSet{} },
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"): func() metav1.Object { return &policyv1.PodDisruptionBudget{} },
	storagev1.SchemeGroupVersion.WithKind("StorageClass"):       func() metav1.Object { return &storagev1.StorageClass{} },
	schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"):   func() metav1.Object { return &schedulingv1.PriorityClass{} },
	karpenterGV.WithKind("NodePool"):                            func() metav1.Object { return &karpv1.NodePool{} },
	karpenterGV.WithKind("NodeClaim"):                           func() metav1.Object { return &karpv1.NodeClaim{} },
	karpenterAWSGV.WithKind("EC2NodeClass"):                     func() metav1.Object { return &awsv1.EC2NodeClass{} },

	// Served until 1.25; decoded as written and kept as the policy/v1
	// object kube-apiserver enforces (PDBFromV1beta1).
	policyv1beta1.SchemeGroupVersion.WithKind("PodDisruptionBudget"): func() metav1.Object { return &policyv1beta1.PodDisruptionBudget{} },
}

// clusterScoped lists the modelled kinds that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "PersistentVolume": true, "StorageClass": true, "PriorityClass": true,
	"NodePool": true, "NodeClaim": true, "EC2NodeClass": true,
}

// modelledKinds lists "apiVersion kind" for every kind the twin understands, sorted.
func modelledKinds() []string {
	out := make([]string, 0, len(modelled))
	for gvk := range modelled {
		out = append(out, gvk.GroupVersion().String()+" "+gvk.Kind)
	}
	sort.Strings(out)
	return out
}

// Decode splits data into documents and decodes each one. It returns every
// object it could decode and, if any document was bad, an error listing each
// bad document on its own line, so one mistake never hides the others.
func Decode(file string, data []byte) ([]Object, error) { return DecodeAt(file, 1, data) }

// DecodeAt is Decode for manifests embedded in a larger file, whose first
// line is line firstLine of file.
func DecodeAt(file string, firstLine int, data []byte) ([]Object, error) {
	var objs []Object
	var errs []error
	for _, d := range splitStream(data, false) {
		got, err := decodeDocument(Source{File: file, Line: d.Line + firstLine - 1}, bytes.Clone(d.Body))
		objs = append(objs, got...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return objs, errors.Join(errs...)
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// decodeDocument decodes one document, which may be a List.
func decodeDocument(src Source, doc []byte) ([]Object, error) {
	var c Converter
	js, dup, err := c.ToJSON(doc)
	if dup.Line > 0 {
		// Scenario manifests are strict: a duplicate key is an error,
		// worded as sigs.k8s.io/yaml words it.
		js, err = yaml.YAMLToJSONStrict(doc)
	}
	if err != nil {
		msg := YAMLErrorMessage(err)
		// Point at the line the YAML parser named, relative to the file.
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			if n, convErr := strconv.Atoi(m[1]); convErr == nil {
				src.Line += n - 1
			}
		}
		return nil, &Error{Source: src, Msg: "malformed YAML: " + msg, Fix: "fix the YAML syntax"}
	}
	var head struct {
		APIVersion string    `json:"apiVersion"`
		Kind       string    `json:"kind"`
		Items      []rawJSON `json:"items"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &head); err != nil {
		return nil, &Error{Source: src, Msg: "not a Kubernetes object: " + err.Error(), Fix: "each document needs apiVersion and kind"}
	}
	if head.APIVersion == "" || head.Kind == "" {
		return nil, &Error{Source: src, Msg: "missing apiVersion or kind", Fix: "each document needs apiVersion and kind, e.g. apiVersion: apps/v1, kind: Deployment"}
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return nil, &Error{Source: src, Field: "apiVersion", Msg: err.Error()}
	}
	gvk := gv.WithKind(head.Kind)
	if strings.HasSuffix(head.Kind, "List") && head.Items != nil {
		return decodeList(src, doc, head.Items)
	}
	return decodeObject(src, doc, js, gvk)
}

// rawJSON keeps a List item undecoded until its kind is known.
type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error { *r = append((*r)[:0], b...); return nil }

func decodeList(src Source, doc []byte, items []rawJSON) ([]Object, error) {
	var objs []Object
	var errs []error
	for i, item := range items {
		isrc := src
		if line := LineOf(doc, fmt.Sprintf("items[%d]", i)); line > 0 {
			isrc.Line = src.Line + line - 1
		}
		itemDoc, _ := yaml.JSONToYAML(item)
		got, err := decodeDocument(isrc, itemDoc)
		objs = append(objs, got...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return objs, errors.Join(errs...)
}

func decodeObject(src Source, doc, js []byte, gvk schema.GroupVersionKind) ([]Object, error) {
	newObj, ok := modelled[gvk]
	if !ok {
		if scheme.Scheme.Recognizes(gvk) {
			return []Object{{Source: src, GVK: gvk, Ignored: true, doc: doc}}, nil
		}
		return nil, &Error{Source: src, Object: gvk.Kind, Field: "apiVersion",
			Msg: fmt.Sprintf("unknown kind %q in %q", gvk.Kind, gvk.GroupVersion().String()),
			Fix: unknownKindFix(gvk)}
	}
	obj, strictErrs, err := DecodeStrict(js, newObj)
	o := Object{Source: src, GVK: gvk, Object: obj, doc: doc}
	if err != nil {
		return nil, o.FieldError(DecodeError(doc, err))
	}
	if np, ok := obj.(*karpv1.NodePool); ok {
		markExplicitNever(np, js)
	}
	if b, ok := obj.(*policyv1beta1.PodDisruptionBudget); ok {
		obj = PDBFromV1beta1(b)
		o.Object = obj
	}
	if !clusterScoped[gvk.Kind] && obj.GetNamespace() == "" {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	if len(strictErrs) > 0 {
		var errs []error
		for _, se := range strictErrs {
			field, msg := FieldPath(se), se.Error()
			fix := "remove it or correct its spelling"
			if strings.Contains(msg, "unknown field") {
				msg = "unknown field"
			} else if strings.Contains(msg, "duplicate field") {
				msg = "duplicate field"
				fix = "keep one of the two"
			}
			errs = append(errs, o.FieldError(field, msg, fix))
		}
		return nil, errors.Join(errs...)
	}
	if obj.GetName() == "" {
		return nil, o.FieldError("metadata.name", "missing", "every object needs metadata.name")
	}
	if clusterScoped[gvk.Kind] {
		if obj.GetNamespace() != "" {
			return nil, o.FieldError("metadata.namespace", fmt.Sprintf("%s is cluster-scoped but has namespace %q", gvk.Kind, obj.GetNamespace()), "remove metadata.namespace")
		}
	}
	return []Object{o}, nil
}

// ValidateSpec applies the kube-apiserver's own checks of a
// PodDisruptionBudget, so one the API server would refuse never reaches the
// twin. k8s.io/kubernetes is not importable as a library; these are its
// rules, field paths and messages, pkg/apis/policy/validation
// ValidatePodDisruptionBudgetSpec: minAvailable and maxUnavailable not both
// set, each a non-negative integer or a percent no greater than 100%. (The
// workloads' rules are internal/rules/workload's, ValidateDeployment and its
// siblings.)
//
// It is not part of Decode, so that a scenario's validation can report
// these problems together with every other one.
func ValidateSpec(o Object) error {
	pdb, ok := o.Object.(*policyv1.PodDisruptionBudget)
	if !ok {
		return nil
	}
	var errs []error
	bad := func(field, msg, fix string) { errs = append(errs, o.FieldError(field, msg, fix)) }
	intOrPercent := func(field string, v *intstr.IntOrString) {
		if v == nil {
			return
		}
		for _, msg := range intOrPercentErrors(*v) {
			bad(field, fmt.Sprintf("%s: %s", v.String(), msg), "use a non-negative integer or a percentage from 0% to 100%")
		}
	}
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		bad("spec", "minAvailable and maxUnavailable cannot be both set", "keep one of the two")
	}
	intOrPercent("spec.minAvailable", pdb.Spec.MinAvailable)
	intOrPercent("spec.maxUnavailable", pdb.Spec.MaxUnavailable)
	return errors.Join(errs...)
}

// intOrPercentErrors is ValidatePositiveIntOrPercent and
// IsNotMoreThan100Percent of k8s.io/kubernetes pkg/apis/apps/validation,
// on apimachinery's IsValidPercent.
func intOrPercentErrors(v intstr.IntOrString) []string {
	if v.Type == intstr.String {
		if msgs := validation.IsValidPercent(v.StrVal); len(msgs) > 0 {
			return msgs
		}
		if intOrPercentValue(v) > 100 {
			return []string{"must not be greater than 100%"}
		}
		return nil
	}
	if v.IntVal < 0 {
		return []string{"must be greater than or equal to 0"}
	}
	return nil
}

// intOrPercentValue is apps/validation's getIntOrPercentValue: the number of
// a valid percent, else the integer.
func intOrPercentValue(v intstr.IntOrString) int {
	if v.Type == intstr.String {
		n, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
		return n
	}
	return int(v.IntVal)
}

var (
	goFieldRE   = regexp.MustCompile(`Go struct field [A-Za-z0-9_]+\.([A-Za-z0-9_.\[\]]+) of type`)
	numberRE    = regexp.MustCompile(`cannot unmarshal number (\S+) into Go (?:struct field \S+|value) of type (\S+)`)
	unmarshalRE = regexp.MustCompile(`cannot unmarshal (number [-0-9.eE+]+|\S+) into Go (?:struct field \S+|value) of type (\S+)`)
)

// DecodeError words an error of the strict decoder (DecodeStrict) about
// doc, the document as written: the field it is about — the decoder's
// path, a Go type error's field, or, for a value a type's own decoder
// refused without saying where (a quantity, a duration), the field found
// in doc by its value — what is wrong, as a YAML author reads it, and the
// fix. `check` and `scenario validate` both word decoding errors with it.
func DecodeError(doc []byte, err error) (field, msg, fix string) {
	var fe kjson.FieldError
	if errors.As(err, &fe) {
		field = fe.FieldPath()
	} else if m := goFieldRE.FindStringSubmatch(err.Error()); m != nil {
		field = m[1]
	}
	msg, fix = CleanJSONError(err), "fix the value's type"
	if lo, hi, ok := outOfRange(err); ok {
		fix = fmt.Sprintf("use an integer from %s to %s", lo, hi)
	}
	if field == "" {
		field, msg, fix = valueError(doc, err, msg, fix)
	}
	return field, msg, fix
}

// CleanJSONError is a JSON decoding error without Go's words: "expected an
// integer, got string", not "cannot unmarshal string into Go struct field
// DeploymentSpec.spec.replicas of type int32".
func CleanJSONError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if lo, hi, ok := outOfRange(err); ok {
		return fmt.Sprintf("%s is out of range (%s to %s)", numberRE.FindStringSubmatch(msg)[1], lo, hi)
	}
	if m := unmarshalRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("expected %s, got %s", DescribeGoType(m[2]), m[1])
	}
	return msg
}

// outOfRange reports whether err is an integer that does not fit its Go
// integer type (encoding/json says "cannot unmarshal number 3000000000
// into … of type int32", a type error), and the type's range: the number
// is of the right kind, only too large or too small.
func outOfRange(err error) (lo, hi string, ok bool) {
	m := numberRE.FindStringSubmatch(err.Error())
	if m == nil {
		return "", "", false
	}
	n := m[1]
	if _, perr := strconv.ParseInt(n, 10, 64); perr != nil && !errors.Is(perr, strconv.ErrRange) {
		return "", "", false // 1.5: not an integer, a type error
	}
	switch m[2] {
	case "int8":
		return strconv.Itoa(math.MinInt8), strconv.Itoa(math.MaxInt8), true
	case "int16":
		return strconv.Itoa(math.MinInt16), strconv.Itoa(math.MaxInt16), true
	case "int32":
		return strconv.Itoa(math.MinInt32), strconv.Itoa(math.MaxInt32), true
	case "int64", "int":
		return strconv.FormatInt(math.MinInt64, 10), strconv.FormatInt(math.MaxInt64, 10), true
	case "uint8":
		return "0", strconv.Itoa(math.MaxUint8), true
	case "uint16":
		return "0", strconv.Itoa(math.MaxUint16), true
	case "uint32":
		return "0", strconv.FormatUint(math.MaxUint32, 10), true
	case "uint64", "uint":
		return "0", strconv.FormatUint(math.MaxUint64, 10), true
	}
	return "", "", false
}

// DescribeGoType names a Go type as a YAML author thinks of it: "int32" is
// "an integer", "[]string" "a list".
func DescribeGoType(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map"):
		return "a map"
	}
	return t
}

func unknownKindFix(gvk schema.GroupVersionKind) string {
	// Sorted, so a kind read in two versions names the same one every run
	// (policy/v1 before policy/v1beta1).
	for _, known := range modelledKinds() {
		if av, kind, _ := strings.Cut(known, " "); kind == gvk.Kind {
			return fmt.Sprintf("%s is read as apiVersion %s", gvk.Kind, av)
		}
	}
	return "Ladder reads built-in Kubernetes kinds, karpenter.sh/v1 NodePool/NodeClaim and karpenter.k8s.aws/v1 EC2NodeClass"
}

// markExplicitNever keeps "Never" distinguishable from an absent duration:
// upstream's NillableDuration decodes both to a nil Duration and nil Raw, and
// defaulting would turn an explicit expireAfter: Never into 720h. A "Never"
// the manifest wrote gets Raw = "Never" (Duration stays nil, which is how
// Karpenter reads Never; Raw is not hashed and marshals back to "Never").
func markExplicitNever(np *karpv1.NodePool, js []byte) {
	var raw struct {
		Spec struct {
			Template struct {
				Spec struct {
					ExpireAfter *string `json:"expireAfter"`
				} `json:"spec"`
			} `json:"template"`
			Disruption struct {
				ConsolidateAfter *string `json:"consolidateAfter"`
			} `json:"disruption"`
		} `json:"spec"`
	}
	if kjson.UnmarshalCaseSensitivePreserveInts(js, &raw) != nil {
		return
	}
	never := func(s *string) bool { return s != nil && *s == karpv1.Never }
	if never(raw.Spec.Template.Spec.ExpireAfter) {
		np.Spec.Template.Spec.ExpireAfter = karpv1.NillableDuration{Raw: []byte(`"` + karpv1.Never + `"`)}
	}
	if never(raw.Spec.Disruption.ConsolidateAfter) {
		np.Spec.Disruption.ConsolidateAfter = karpv1.NillableDuration{Raw: []byte(`"` + karpv1.Never + `"`)}
	}
}

// ClusterScoped reports whether a modelled kind has no namespace.
func ClusterScoped(kind string) bool { return clusterScoped[kind] }

var durationErrorRE = regexp.MustCompile(`^time: (?:unknown unit "[^"]*" in |invalid |missing unit in )duration "([^"]*)"`)

// valueError names the field of a value a type's own decoder refused
// without saying where (metav1.Duration's time.ParseDuration,
// resource.Quantity's ParseQuantity): the field is found in the document
// by its value, and the message says what the field accepts.
func valueError(doc []byte, err error, msg, fix string) (string, string, string) {
	if m := durationErrorRE.FindStringSubmatch(err.Error()); m != nil {
		field, _ := Locate(doc, "", m[1])
		units := "h, m or s"
		if regexp.MustCompile(`budgets\[\d+\]\.duration$`).MatchString(field) {
			units = "h or m (the NodePool CRD's pattern)"
		}
		return field, fmt.Sprintf("%q is not a duration", m[1]),
			"use a number with a unit of " + units + ", e.g. 24h for a day or 1h30m; Go durations have no d"
	}
	if errors.Is(err, resource.ErrFormatWrong) || errors.Is(err, resource.ErrSuffix) || errors.Is(err, resource.ErrNumeric) {
		if field, value := badQuantity(doc); field != "" {
			return field, fmt.Sprintf("%q is not a quantity", value),
				"use a number with an optional suffix, e.g. 250m or 1 CPU, 512Mi or 1Gi of memory"
		}
	}
	return "", msg, fix
}

// badQuantity finds the first value under a resources map (requests,
// limits, capacity, a NodePool's limits) that resource.ParseQuantity refuses.
func badQuantity(doc []byte) (field, value string) {
	var root yaml3.Node
	if yaml3.Unmarshal(doc, &root) != nil || len(root.Content) == 0 {
		return "", ""
	}
	quantityMaps := map[string]bool{"requests": true, "limits": true, "capacity": true, "overhead": true}
	var walk func(n *yaml3.Node, path string, inQuantities bool) bool
	walk = func(n *yaml3.Node, path string, inQuantities bool) bool {
		switch n.Kind {
		case yaml3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				p := k
				if path != "" {
					p = path + "." + k
				}
				if inQuantities && v.Kind == yaml3.ScalarNode {
					if _, err := resource.ParseQuantity(v.Value); err != nil {
						field, value = p, v.Value
						return true
					}
				}
				if walk(v, p, quantityMaps[k]) {
					return true
				}
			}
		case yaml3.SequenceNode:
			for i, c := range n.Content {
				if walk(c, fmt.Sprintf("%s[%d]", path, i), false) {
					return true
				}
			}
		}
		return false
	}
	walk(root.Content[0], "", false)
	return field, value
}

// YAMLErrorMessage is a YAML parser's error on one short line: the first
// of its errors, with how many there are in all. A 10 MB document of
// repeated keys has one error per key; listing them all would be a line
// of tens of megabytes.
func YAMLErrorMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	lines := strings.Split(msg, "\n")
	head := strings.Join(strings.Fields(lines[0]), " ")
	var items []string
	for _, l := range lines[1:] {
		if t := strings.TrimSpace(l); t != "" {
			items = append(items, t)
		}
	}
	switch {
	case len(items) == 0:
	case len(items) == 1:
		head += " " + items[0]
	default:
		head += fmt.Sprintf(" %s (%d errors in all; the first is shown)", items[0], len(items))
	}
	const maxLen = 300
	if len(head) > maxLen {
		head = strings.ToValidUTF8(head[:maxLen], "") + "…"
	}
	return head
}
