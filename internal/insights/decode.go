package insights

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	yaml3 "gopkg.in/yaml.v3"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// Problem is a document, or a field of one, that could not be read. The
// scan goes on without it; the invalid-manifest check reports it.
type Problem struct {
	Source Source
	// Object is what is known of the object: often its kind and name.
	Object   ObjectRef
	Field    string
	Severity Severity
	Message  string
	Fix      string
	doc      []byte
	cause    problemCause
}

// problemCause sets apart the problems that say a document is not a
// Kubernetes object at all, so that a file of them can be skipped.
type problemCause int

const (
	causeOther problemCause = iota
	// causeNotObject: the document has no apiVersion and kind (a values
	// file, a CI configuration, a JSON schema).
	causeNotObject
	// causeTemplate: the document is unrendered Helm or Go template
	// source that is not YAML, or not YAML a manifest can be.
	causeTemplate
)

func (p Problem) Error() string {
	line := p.Source.Line
	if l := manifest.LineOf(p.doc, p.Field); l > 0 && line > 0 {
		line += l - 1
	}
	e := manifest.Error{Source: manifest.Source{File: p.Source.File, Line: line},
		Object: p.Object.String(), Field: p.Field, Msg: p.Message, Fix: p.Fix}
	if p.Source.File == "" {
		return p.Source.Origin + ": " + strings.TrimPrefix(e.Error(), ": ")
	}
	return e.Error()
}

type typedKey struct{ apiVersion, kind string }

// typedKinds are the kinds checks read in depth, decoded (strictly) into
// their upstream Go types. Every other kind is kept with its apiVersion,
// kind and metadata only.
var typedKinds = map[typedKey]func() any{
	{"v1", "Pod"}:                                 func() any { return &corev1.Pod{} },
	{"apps/v1", "Deployment"}:                     func() any { return &appsv1.Deployment{} },
	{"apps/v1", "StatefulSet"}:                    func() any { return &appsv1.StatefulSet{} },
	{"apps/v1", "ReplicaSet"}:                     func() any { return &appsv1.ReplicaSet{} },
	{"apps/v1", "DaemonSet"}:                      func() any { return &appsv1.DaemonSet{} },
	{"policy/v1", "PodDisruptionBudget"}:          func() any { return &policyv1.PodDisruptionBudget{} },
	{"policy/v1beta1", "PodDisruptionBudget"}:     func() any { return &policyv1beta1.PodDisruptionBudget{} },
	{"autoscaling/v2", "HorizontalPodAutoscaler"}: func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	{"autoscaling/v1", "HorizontalPodAutoscaler"}: func() any { return &autoscalingv1.HorizontalPodAutoscaler{} },
	{"storage.k8s.io/v1", "StorageClass"}:         func() any { return &storagev1.StorageClass{} },
	{"karpenter.sh/v1", "NodePool"}:               func() any { return &karpv1.NodePool{} },
	{"karpenter.k8s.aws/v1", "EC2NodeClass"}:      func() any { return &awsv1.EC2NodeClass{} },
}

// Decode reads a stream of manifests — multi-document YAML, JSON, and List
// kinds — of any kind. Every document that decodes becomes an Object; every
// one that does not becomes a Problem naming file:line, and the others are
// still returned. Documents are decoded in parallel; the result is in
// document order.
func Decode(file string, data []byte) ([]*Object, []Problem) {
	return DecodeAt(Source{File: file, Line: 1}, data)
}

// DecodeAt is Decode for a stream whose first line is at src (a manifest
// embedded in a larger file, a Helm release's manifest).
func DecodeAt(src Source, data []byte) ([]*Object, []Problem) {
	if src.Line < 1 {
		src.Line = 1
	}
	docs := manifest.SplitDocuments(data)
	return decodeAll(len(docs), func(i int) ([]*Object, []Problem) {
		s := src
		s.Line = src.Line + docs[i].Line - 1
		objs, problems := decodeDocument(s, docs[i].Body, nil)
		for j := range problems {
			settleProblem(&problems[j])
		}
		return objs, problems
	})
}

// decodeAll runs decode for 0 … n-1, in parallel when there are many, and
// joins the results in order.
func decodeAll(n int, decode func(i int) ([]*Object, []Problem)) ([]*Object, []Problem) {
	type result struct {
		objs     []*Object
		problems []Problem
	}
	results := make([]result, n)
	if workers := min(runtime.GOMAXPROCS(0), n/16); workers > 1 {
		var wg sync.WaitGroup
		const chunk = 64
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for start := range next {
					for i := start; i < min(start+chunk, n); i++ {
						results[i].objs, results[i].problems = decode(i)
					}
				}
			})
		}
		for start := 0; start < n; start += chunk {
			next <- start
		}
		close(next)
		wg.Wait()
	} else {
		for i := range n {
			results[i].objs, results[i].problems = decode(i)
		}
	}
	total := 0
	for _, r := range results {
		total += len(r.objs)
	}
	objs := make([]*Object, 0, total)
	var problems []Problem
	for _, r := range results {
		objs = append(objs, r.objs...)
		problems = append(problems, r.problems...)
	}
	return objs, problems
}

func isTyped(apiVersion, kind string) bool {
	_, ok := typedKinds[typedKey{apiVersion, kind}]
	return ok
}

// decodeTypedFast decodes a typed kind whose head manifest.ScanHead read, taking the
// metadata from the Go object. done is false when the document has a value
// of the wrong type; the caller then takes the slow path.
func decodeTypedFast(src Source, doc, js []byte, h manifest.Head) (objs []*Object, problems []Problem, done bool) {
	typed, strictErrs, err := manifest.DecodeStrict(js, typedKinds[typedKey{h.APIVersion, h.Kind}])
	if err != nil {
		return nil, nil, false
	}
	meta, ok := typed.(metav1.Object)
	if !ok {
		return nil, nil, false
	}
	o := &Object{Source: src, APIVersion: h.APIVersion, Kind: h.Kind, Namespace: meta.GetNamespace(), Name: meta.GetName(),
		Labels: meta.GetLabels(), Annotations: meta.GetAnnotations(), Doc: doc, Typed: summarize(typed)}
	if o.Name == "" && meta.GetGenerateName() == "" {
		problems = append(problems, Problem{Source: src, Object: o.Ref(), Field: "metadata.name", Severity: Warning,
			Message: "missing metadata.name", Fix: "every object needs metadata.name", doc: doc})
	}
	problems = append(problems, metaProblems(src, o, doc, meta)...)
	problems = append(problems, strictProblems(src, o, doc, strictErrs)...)
	return []*Object{o}, append(problems, workloadProblems(src, o, doc, typed)...), true
}

// strictProblems reports unknown and duplicate fields.
func strictProblems(src Source, o *Object, doc []byte, strictErrs []error) []Problem {
	var problems []Problem
	for _, se := range strictErrs {
		p := Problem{Source: src, Object: o.Ref(), Severity: Warning, doc: doc,
			Message: se.Error(), Fix: "remove it or correct its spelling; the API server's strict field validation rejects it"}
		var fe kjson.FieldError
		if errors.As(se, &fe) {
			p.Field = fe.FieldPath()
		}
		switch {
		case strings.Contains(p.Message, "unknown field"):
			p.Message = "unknown field"
		case strings.Contains(p.Message, "duplicate field"):
			p.Message, p.Fix = "duplicate field", "keep one of the two"
		}
		problems = append(problems, p)
	}
	return problems
}

// head is what every object has, and a List's items.
type head struct {
	manifest.Head
	Items []json.RawMessage `json:"items"`
}

// decodeDocument decodes one document, which may be a List. js is the
// document as JSON when the caller already has it (List items).
func decodeDocument(src Source, doc, js []byte) ([]*Object, []Problem) {
	if js == nil {
		if objs, problems, ok := decodeJSONList(src, doc); ok {
			return objs, problems
		}
	}
	return decodeGeneral(src, doc, js)
}

// decodeGeneral is decodeDocument without the JSON List shortcut.
func decodeGeneral(src Source, doc, js []byte) ([]*Object, []Problem) {
	if js == nil {
		c := converterPool.Get().(*manifest.Converter)
		defer converterPool.Put(c) // js is not kept past this call
		var err error
		var dup manifest.DuplicateKey
		if js, dup, err = c.ToJSON(doc); err != nil {
			var problem Problem
			if js, problem = unreadableYAML(src, doc, err); js == nil {
				return nil, []Problem{problem}
			}
			objs, problems := decodeGeneral(src, doc, js)
			return withDuplicateKeys(problem, objs, problems)
		}
		if dup.Line > 0 {
			objs, problems := decodeGeneral(src, doc, js)
			return withDuplicateKeys(duplicateKeys(src, dup), objs, problems)
		}
	}
	scanned, hasItems, fast := manifest.ScanHead(js, isTyped)
	h := head{Head: scanned}
	if fast && hasItems && strings.HasSuffix(h.Kind, "List") {
		if ranges, ok := jsonItemRanges(js); ok {
			return decodeListItems(src, doc, js, ranges, nil)
		}
	}
	if fast && !hasItems && isTyped(h.APIVersion, h.Kind) {
		if objs, problems, done := decodeTypedFast(src, doc, js, h.Head); done {
			return objs, problems
		}
		fast = false // a value of the wrong type: the slow path words it
	}
	if !fast || hasItems {
		h = head{}
		if err := json.Unmarshal(js, &h); err != nil {
			// Keep what can be kept: apiVersion and kind still let API checks run.
			var tiny struct {
				APIVersion, Kind string
				Metadata         struct{ Name, Namespace string }
			}
			_ = json.Unmarshal(js, &tiny)
			h = head{}
			h.APIVersion, h.Kind = tiny.APIVersion, tiny.Kind
			p := Problem{Source: src, Object: ObjectRef{APIVersion: h.APIVersion, Kind: h.Kind, Name: tiny.Metadata.Name, Namespace: tiny.Metadata.Namespace, Source: src.String()}, Severity: Error,
				Message: "not a Kubernetes object: " + manifest.CleanJSONError(err), Fix: "each document is a map with apiVersion, kind and metadata", doc: doc}
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				if ute.Field == "" {
					p.Message = fmt.Sprintf("not a Kubernetes object: the document is %s %s; the document was not checked", article(ute.Value), ute.Value)
				} else {
					// The path runs through the embedded manifest.Head,
					// which the author never wrote.
					p.Field = strings.TrimPrefix(ute.Field, "Head.")
					p.Message = manifest.CleanJSONError(err)
					if ute.Type != nil && ute.Type.Kind() == reflect.String {
						// Chart.AppVersion 3.9 rendered into a label is
						// the classic: kube-apiserver refuses it too.
						p.Fix = "quote the value (\"3.9\", \"true\"): labels, annotations and names are strings, and the API server refuses a number or boolean there"
					}
				}
			}
			if h.APIVersion == "" || h.Kind == "" {
				p.cause = causeNotObject
				return nil, []Problem{p}
			}
			o := &Object{Source: src, APIVersion: h.APIVersion, Kind: h.Kind, Doc: doc}
			return []*Object{o}, []Problem{p}
		}
	}
	if h.APIVersion == "" || h.Kind == "" {
		return nil, []Problem{{Source: src, Object: ObjectRef{Kind: h.Kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace, Source: src.String()},
			Severity: Error, Message: "missing apiVersion or kind; the document was not checked",
			Fix: "every document needs apiVersion and kind, e.g. apiVersion: apps/v1, kind: Deployment", doc: doc, cause: causeNotObject}}
	}
	if strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		return decodeList(src, doc, h.Items)
	}
	o := &Object{Source: src, APIVersion: h.APIVersion, Kind: h.Kind, Namespace: h.Metadata.Namespace, Name: h.Metadata.Name,
		Labels: h.Metadata.Labels, Annotations: h.Metadata.Annotations, Doc: doc}
	var problems []Problem
	if o.Name == "" && h.Metadata.GenerateName == "" {
		p := Problem{Source: src, Object: o.Ref(), Field: "metadata.name", Severity: Warning,
			Message: "missing metadata.name", Fix: "every object needs metadata.name", doc: doc}
		if unnamedConfig(h.Head) {
			p.cause = causeNotObject
		}
		problems = append(problems, p)
	}
	problems = append(problems, metaProblems(src, o, doc, &metav1.ObjectMeta{Name: h.Metadata.Name, GenerateName: h.Metadata.GenerateName,
		Namespace: h.Metadata.Namespace, Labels: h.Metadata.Labels, Annotations: h.Metadata.Annotations})...)
	if newTyped, ok := typedKinds[typedKey{h.APIVersion, h.Kind}]; ok {
		typed, strictErrs, err := manifest.DecodeStrict(js, newTyped)
		switch {
		case err != nil:
			// A List's item has no document of its own: its value is
			// found in its JSON.
			text := doc
			if text == nil {
				text = js
			}
			field, msg, fix := manifest.DecodeError(text, err)
			problems = append(problems, Problem{Source: src, Object: o.Ref(), Severity: Error, doc: doc,
				Field: field, Message: msg + "; only its apiVersion was checked", Fix: fix})
		default:
			o.Typed = summarize(typed)
			problems = append(problems, strictProblems(src, o, doc, strictErrs)...)
			problems = append(problems, workloadProblems(src, o, doc, typed)...)
		}
	}
	return []*Object{o}, problems
}

func decodeList(src Source, doc []byte, items []json.RawMessage) ([]*Object, []Problem) {
	lines := itemLines(doc, len(items))
	return decodeAll(len(items), func(i int) ([]*Object, []Problem) {
		isrc := src
		if lines[i] > 0 {
			isrc.Line = src.Line + lines[i] - 1
		}
		objs, problems := decodeItem(isrc, items[i])
		return objs, itemProblems(i, problems)
	})
}

// decodeJSONList decodes a document that is one JSON List — what kubectl
// get -o json writes — without a pass over the whole document on one core:
// the List without its items is validated and read, and each item is
// validated by the worker that decodes it. ok is false when doc is not a
// JSON List, or when anything in it is not valid JSON; the caller then
// takes the general path, which words the error.
func decodeJSONList(src Source, doc []byte) (objs []*Object, problems []Problem, ok bool) {
	if jsonStart(doc) < 0 {
		return nil, nil, false
	}
	js := bytes.TrimSpace(doc)
	ranges, array, found := manifest.JSONItems(js)
	if !found {
		return nil, nil, false
	}
	skeleton := slices.Concat(js[:array[0]], []byte("[]"), js[array[1]:])
	if !json.Valid(skeleton) {
		return nil, nil, false
	}
	if h, hasItems, fast := manifest.ScanHead(skeleton, isTyped); !fast || !hasItems || !strings.HasSuffix(h.Kind, "List") {
		return nil, nil, false
	}
	var invalid atomic.Bool
	objs, problems = decodeListItems(src, doc, js, ranges, func(isrc Source, item []byte) ([]*Object, []Problem) {
		if h, hasItems, fast := manifest.ScanHead(item, isTyped); fast && !hasItems && isTyped(h.APIVersion, h.Kind) {
			if objs, problems, done := decodeTypedFast(isrc, nil, item, h); done {
				return objs, problems // the strict decoder validated the whole item
			}
		}
		if !json.Valid(item) {
			invalid.Store(true)
			return nil, nil
		}
		return decodeItem(isrc, item)
	})
	if invalid.Load() {
		return nil, nil, false
	}
	return objs, problems, true
}

// decodeListItems decodes a List's items, in parallel, given their byte
// ranges in js. When the document itself is that JSON, lines come from the
// ranges; else from the YAML. decode, when not nil, replaces decodeItem.
func decodeListItems(src Source, doc, js []byte, ranges [][2]int, decode func(src Source, item []byte) ([]*Object, []Problem)) ([]*Object, []Problem) {
	if decode == nil {
		decode = decodeItem
	}
	var lines []int
	if lead := jsonStart(doc); lead >= 0 && bytes.Equal(js, bytes.TrimSpace(doc)) {
		lines = make([]int, len(ranges))
		line, last := 1+bytes.Count(doc[:lead], []byte{'\n'}), 0
		for i, r := range ranges {
			line += bytes.Count(js[last:r[0]], []byte{'\n'})
			last = r[0]
			lines[i] = line
		}
	} else {
		lines = itemLines(doc, len(ranges))
	}
	return decodeAll(len(ranges), func(i int) ([]*Object, []Problem) {
		isrc := src
		if lines[i] > 0 {
			isrc.Line = src.Line + lines[i] - 1
		}
		objs, problems := decode(isrc, js[ranges[i][0]:ranges[i][1]])
		return objs, itemProblems(i, problems)
	})
}

// itemProblems makes the problems of a List's item i its own: each names
// the item (items[3], items[3].spec.replicas), and none says the List is
// not a manifest — a List is one, whatever an item holds, so a bad item is
// reported on its own line and its good neighbours are still checked.
func itemProblems(i int, problems []Problem) []Problem {
	item := fmt.Sprintf("items[%d]", i)
	for j := range problems {
		p := &problems[j]
		if p.Field == "" {
			p.Field = item
		} else {
			p.Field = item + "." + p.Field
		}
		p.Message = strings.ReplaceAll(p.Message, "the document", "the item")
		p.cause = causeOther
	}
	return problems
}

// decodeItem decodes one List item. Its document is the List's, so field
// lines are not resolved: findings point at the item's first line.
func decodeItem(src Source, item []byte) ([]*Object, []Problem) {
	objs, problems := decodeDocument(src, nil, item)
	for _, o := range objs {
		o.Doc = nil
	}
	return objs, problems
}

// jsonStart returns the offset of a JSON document's opening brace, or -1
// when doc is not JSON.
func jsonStart(doc []byte) int {
	t := bytes.TrimLeft(doc, " \n\t\r")
	if len(t) == 0 || t[0] != '{' {
		return -1
	}
	return len(doc) - len(t)
}

// itemLines returns the 1-based line, within doc, of each of a List's n
// items (0 where unknown), reading doc once: JSON with the head scanner,
// YAML with yaml.v3's node tree.
func itemLines(doc []byte, n int) []int {
	lines := make([]int, n)
	if lead := jsonStart(doc); lead >= 0 {
		ranges, ok := jsonItemRanges(doc[lead:])
		if ok && len(ranges) == n {
			line, last := 1+bytes.Count(doc[:lead], []byte{'\n'}), lead
			for i, r := range ranges {
				line += bytes.Count(doc[last:lead+r[0]], []byte{'\n'})
				last = lead + r[0]
				lines[i] = line
			}
			return lines
		}
	}
	var root yaml3.Node
	if err := yaml3.Unmarshal(doc, &root); err != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml3.MappingNode {
		return lines
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "items" && m.Content[i+1].Kind == yaml3.SequenceNode {
			for j, item := range m.Content[i+1].Content {
				if j < n {
					lines[j] = item.Line
				}
			}
		}
	}
	return lines
}

// jsonItemRanges returns the byte range of each element of the top-level
// "items" array of a JSON document.
func jsonItemRanges(doc []byte) (ranges [][2]int, ok bool) {
	ranges, _, ok = manifest.JSONItems(doc)
	return ranges, ok
}

// converterPool keeps YAML→JSON converters, whose buffers a scan of many
// documents would otherwise allocate once per document.
var converterPool = sync.Pool{New: func() any { return new(manifest.Converter) }}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
