package manifest

import (
	"bytes"
	"encoding/json"

	"sigs.k8s.io/yaml"
)

// DuplicateKey is a mapping key written twice in a YAML document: the key,
// and the 1-based line, in the document, of its second occurrence.
type DuplicateKey struct {
	Key  string
	Line int
}

// Converter converts YAML (or JSON) documents to JSON as kubectl does —
// sigs.k8s.io/yaml, which resolves scalars as go.yaml.in/yaml/v2 — with a
// private fast path for the block-style YAML manifests are written in
// (yamlfast.go; TestFastYAML* and FuzzFastYAML hold it to
// sigs.k8s.io/yaml). It reuses its buffers: the JSON it returns is valid
// until its next use. The zero value is ready to use.
type Converter struct{ p fastParser }

// ToJSON converts one document. JSON documents are used as they are;
// block-style YAML goes through the fast path; anything else, and every
// error, through sigs.k8s.io/yaml's strict conversion, whose error is
// returned.
//
// A document the fast path finds a duplicate key in is converted as
// kubectl converts it (sigs.k8s.io/yaml's non-strict YAMLToJSON, which
// k8s.io/apimachinery's YAMLOrJSONDecoder uses: the last value wins) and
// dup names the key; the strict converter, which would add an error per
// duplicate (and, for a file of them, build the whole list), is not run.
// Block-style YAML stays on the fast path, its duplicates resolved on the
// JSON (lastWins), so a file of repeated keys costs no YAML node tree.
func (c *Converter) ToJSON(doc []byte) (js []byte, dup DuplicateKey, err error) {
	if t := bytes.TrimSpace(doc); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t, dup, nil
	}
	if js, ok := c.p.convert(doc); ok {
		return js, dup, nil
	}
	if dup = c.p.duplicate; dup.Line > 0 {
		if js, ok := c.p.convertKeys(doc, true); ok {
			if js, err := lastWins(js); err == nil {
				return js, dup, nil
			}
		}
		if js, err := yaml.YAMLToJSON(doc); err == nil {
			return js, dup, nil
		}
		dup = DuplicateKey{}
	}
	js, err = yaml.YAMLToJSONStrict(doc)
	return js, dup, err
}

// lastWins rewrites JSON whose objects may repeat a name as
// sigs.k8s.io/yaml's YAMLToJSON writes a document with duplicate keys:
// each object's last value for a name kept (encoding/json decoding into a
// map, as go.yaml.in/yaml/v2 assigns into one), names sorted, numbers as
// written (UseNumber), by json.Marshal as YAMLToJSON marshals.
func lastWins(js []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
