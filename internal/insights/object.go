package insights

// Object is one Kubernetes object of any kind — built-in, custom resource or
// unknown — as a source read it. Every object keeps its apiVersion, kind and
// metadata, so API-version checks see custom resources and kinds Ladder does
// not model; the kinds checks read in depth are also decoded into their
// upstream Go types (Typed).
type Object struct {
	Source     Source
	APIVersion string
	Kind       string
	Namespace  string // as written; empty for cluster-scoped objects and for manifests that leave it to kubectl
	Name       string
	// Labels and Annotations are the object's metadata; nil for the
	// objects ReadPaths reads, which no check reads them of
	// (dropMetadataMaps).
	Labels      map[string]string
	Annotations map[string]string
	// WrittenAs lists other apiVersions the object was last written with,
	// for live objects (from managedFields and the last-applied annotation);
	// API-version checks look at them as well as APIVersion.
	WrittenAs []string
	// Typed is the decoded upstream object (*appsv1.Deployment,
	// *policyv1.PodDisruptionBudget, *karpv1.NodePool, ...) for the kinds in
	// TypedKinds, nil for every other kind and when the document did not
	// decode. A workload, HorizontalPodAutoscaler or PodDisruptionBudget
	// decoded from a manifest keeps only what the checks read of it
	// (summarize).
	Typed any
	// Doc is the document as read (YAML or JSON), used to point findings at
	// a field's line; nil for objects that are not from a file, and for the
	// documents ReadPaths reads from files on disk, which are read again
	// when a finding needs a field's line (docSum).
	Doc []byte
	// docSum is the hash of a document read from a file on disk and not
	// held (docText).
	docSum uint64
}

// Ref is the object as findings name it.
func (o *Object) Ref() ObjectRef {
	return ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Source: o.Source.String()}
}

// String is "Kind namespace/name" or "Kind name".
func (o *Object) String() string { return o.Ref().String() }

// Finding starts a finding about this object; the check fills in the rest.
func (o *Object) Finding(sev Severity, field, message, recommendation string) Finding {
	return Finding{Severity: sev, Object: o.Ref(), Field: field, Message: message, Recommendation: recommendation, source: o.Source, doc: docText{held: o.Doc, sum: o.docSum}}
}
