package insights

import (
	"bytes"
	"strings"
)

// textRef is what a document's text says of the object it holds, read
// line by line because the document did not parse: the top-level
// apiVersion and kind, and the name and namespace directly under
// metadata. A value that is not a plain scalar — a template action, a
// flow collection — is left out. Standard input has no file to open at
// the line a finding names, so the object's name is how its reader finds
// it.
func textRef(doc []byte) ObjectRef {
	var r ObjectRef
	inMetadata := false
	metaIndent := -1
	for line := range bytes.Lines(doc) {
		text := strings.TrimRight(string(line), "\r\n")
		trimmed := strings.TrimLeft(text, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(text) - len(trimmed)
		key, value, ok := strings.Cut(trimmed, ":")
		if indent == 0 {
			inMetadata = false
			if !ok {
				continue
			}
			switch strings.Trim(key, `"'`) {
			case "apiVersion":
				r.APIVersion = scalar(value)
			case "kind":
				r.Kind = scalar(value)
			case "metadata":
				inMetadata, metaIndent = true, -1
				if v := strings.TrimSpace(value); strings.HasPrefix(v, "{") {
					r.Name, r.Namespace = flowField(v, "name"), flowField(v, "namespace")
					inMetadata = false
				}
			}
			continue
		}
		if !inMetadata || !ok {
			continue
		}
		if metaIndent < 0 {
			metaIndent = indent
		}
		if indent != metaIndent {
			continue
		}
		switch strings.Trim(key, `"'`) {
		case "name":
			r.Name = scalar(value)
		case "namespace":
			r.Namespace = scalar(value)
		}
	}
	return r
}

// scalar is a plain or quoted YAML scalar as written after "key:", or ""
// when it is anything else.
func scalar(value string) string {
	v := strings.TrimSpace(value)
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	if v == "" || strings.ContainsAny(v, "{}[]&*!|>\"'`") || strings.Contains(v, ": ") {
		return ""
	}
	return v
}

// flowField is key's value in a flow mapping written on one line
// ({name: web, namespace: shop}), or "".
func flowField(flow, key string) string {
	flow = strings.TrimSuffix(strings.TrimPrefix(flow, "{"), "}")
	for part := range strings.SplitSeq(flow, ",") {
		k, v, ok := strings.Cut(part, ":")
		if ok && strings.Trim(strings.TrimSpace(k), `"'`) == key {
			return scalar(v)
		}
	}
	return ""
}
