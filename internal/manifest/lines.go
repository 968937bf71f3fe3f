package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	yaml3 "gopkg.in/yaml.v3"
)

var pathPartRE = regexp.MustCompile(`^([^\[\]]*)((?:\[\d+\])*)$`)

// LineOf returns the 1-based line, within doc, of the field at path
// ("spec.template.spec.containers[0].resources"), or of its deepest ancestor
// that exists. It returns 0 when the document does not parse.
func LineOf(doc []byte, path string) int {
	if path == "" || len(doc) == 0 {
		return 0
	}
	var root yaml3.Node
	if err := yaml3.Unmarshal(doc, &root); err != nil || len(root.Content) == 0 {
		return 0
	}
	node := root.Content[0]
	line := node.Line
	for _, part := range splitPath(path) {
		m := pathPartRE.FindStringSubmatch(part)
		if m == nil {
			return line
		}
		if m[1] != "" {
			next := mappingValue(node, m[1])
			if next == nil {
				return line
			}
			line = next.key.Line
			node = next.value
		}
		for _, idx := range strings.Split(strings.Trim(m[2], "[]"), "][") {
			if idx == "" {
				continue
			}
			i, _ := strconv.Atoi(idx)
			if node.Kind != yaml3.SequenceNode || i >= len(node.Content) {
				return line
			}
			node = node.Content[i]
			line = node.Line
		}
	}
	return line
}

type keyValue struct{ key, value *yaml3.Node }

func mappingValue(n *yaml3.Node, key string) *keyValue {
	if n.Kind != yaml3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return &keyValue{key: n.Content[i], value: n.Content[i+1]}
		}
	}
	return nil
}

// splitPath splits a field path at dots that are not inside brackets.
func splitPath(path string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range path {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				parts = append(parts, path[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, path[start:])
}

// Locate finds, in doc, the first field whose path matches path once list
// indices are ignored ("spec.actions.scale.replicas" finds
// "spec.actions[2].scale.replicas"), or, when path is empty, the first
// scalar whose value is value. It returns the full path and its 1-based
// line, or "" and 0.
func Locate(doc []byte, path, value string) (string, int) {
	var root yaml3.Node
	if err := yaml3.Unmarshal(doc, &root); err != nil || len(root.Content) == 0 {
		return "", 0
	}
	var found string
	var line int
	var walk func(n *yaml3.Node, full, bare string) bool
	walk = func(n *yaml3.Node, full, bare string) bool {
		switch n.Kind {
		case yaml3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				f, b := k.Value, k.Value
				if full != "" {
					f, b = full+"."+k.Value, bare+"."+k.Value
				}
				if path != "" && b == path {
					found, line = f, k.Line
					return true
				}
				if walk(v, f, b) {
					return true
				}
			}
		case yaml3.SequenceNode:
			for i, c := range n.Content {
				if walk(c, fmt.Sprintf("%s[%d]", full, i), bare) {
					return true
				}
			}
		case yaml3.ScalarNode:
			if path == "" && value != "" && n.Value == value {
				found, line = full, n.Line
				return true
			}
		}
		return false
	}
	walk(root.Content[0], "", "")
	return found, line
}
