package render

import (
	"strings"

	"sigs.k8s.io/yaml"
)

// objectHead is what identifies an object in its source file.
type objectHead struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// lineOfObject is the line, in the source data, of the document that holds
// the object a tool rendered as kind/name, or 1. A tool may have renamed the
// object (kustomize's namePrefix and nameSuffix, a generator's hash suffix),
// so a document matches when its name is part of the rendered name; of
// several, the longest name wins, and the earliest on a tie.
func lineOfObject(data []byte, kind, name string) int {
	docs := splitDocuments(data)
	if len(docs) == 1 {
		return docs[0].line
	}
	best, bestLen := 0, -1
	for _, d := range docs {
		var h objectHead
		if yaml.Unmarshal(d.body, &h) != nil || h.Kind != kind {
			continue
		}
		if strings.Contains(name, h.Metadata.Name) && len(h.Metadata.Name) > bestLen {
			best, bestLen = d.line, len(h.Metadata.Name)
		}
	}
	if bestLen >= 0 {
		return best
	}
	return 1
}
