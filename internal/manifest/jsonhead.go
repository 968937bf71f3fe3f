package manifest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Head is what every object has: its apiVersion, kind and the metadata it
// is named and selected by, as encoding/json decodes them into this type.
type Head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name         string            `json:"name"`
		GenerateName string            `json:"generateName"`
		Namespace    string            `json:"namespace"`
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// ScanHead reads apiVersion, kind and metadata (name, generateName,
// namespace, labels, annotations) from a JSON object without decoding the
// rest, and stops as soon as it has what it needs: apiVersion and kind
// only when typed reports that the kind is decoded into its Go type (which
// has the metadata), else those and metadata. A List (an "items" key) is
// reported by items. ok is false whenever it meets something it does not
// handle — a value of an unexpected type, an escape in a key — and the
// caller then decodes with encoding/json, which also words the error. It
// is a fast path of encoding/json's decoding into Head, held to it by
// TestScanHead.
func ScanHead(js []byte, typed func(apiVersion, kind string) bool) (h Head, items, ok bool) {
	s := jsonScanner{b: js}
	defer fallBack(&ok)
	s.ws()
	haveAPI, haveKind, haveMeta := false, false, false
	s.object(func(key string) bool {
		switch key {
		case "apiVersion":
			h.APIVersion, haveAPI = s.str(), true
		case "kind":
			h.Kind, haveKind = s.str(), true
		case "metadata":
			s.metadata(&h)
			haveMeta = true
		case "items":
			items = true
			s.skip()
		default:
			s.skip()
		}
		// Stop once the head is read: the rest is the decoder's.
		return !(haveAPI && haveKind && !items && !strings.HasSuffix(h.Kind, "List") && (haveMeta || typed(h.APIVersion, h.Kind)))
	})
	return h, items, true
}

// JSONItems returns the byte range of each element of the top-level
// "items" array of a JSON document (a List, as kubectl get -o json writes
// it), and of the array itself, brackets included, without decoding them;
// ok is false when there is no such array, when there is more than one
// "items" key, or when the document is not one JSON value as far as it was
// read.
func JSONItems(doc []byte) (ranges [][2]int, array [2]int, ok bool) {
	s := jsonScanner{b: doc}
	defer fallBack(&ok)
	s.ws()
	found := false
	s.object(func(key string) bool {
		if key != "items" || s.peek() != '[' {
			s.skip()
			return true
		}
		if found {
			panic(errFallback) // a duplicate key: encoding/json words it
		}
		found = true
		array[0] = s.pos
		defer func() { array[1] = s.pos }()
		s.pos++
		for first := true; ; first = false {
			s.ws()
			if s.peek() == ']' {
				s.pos++
				return true
			}
			if !first {
				s.expect(',')
				s.ws()
			}
			start := s.pos
			s.skip()
			ranges = append(ranges, [2]int{start, s.pos})
		}
	})
	s.ws()
	if s.pos != len(s.b) {
		return nil, array, false // more after the object: not one JSON value
	}
	return ranges, array, found
}

type jsonScanner struct {
	b   []byte
	pos int
}

func (s *jsonScanner) ws() {
	for s.pos < len(s.b) {
		switch s.b[s.pos] {
		case ' ', '\n', '\t', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *jsonScanner) peek() byte {
	if s.pos >= len(s.b) {
		panic(errFallback)
	}
	return s.b[s.pos]
}

func (s *jsonScanner) expect(c byte) {
	if s.peek() != c {
		panic(errFallback)
	}
	s.pos++
}

// str reads a string; strings with escapes are unquoted by encoding/json.
func (s *jsonScanner) str() string {
	start := s.pos
	s.expect('"')
	end := s.stringEnd()
	raw := s.b[start:end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var out string
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(errFallback)
	}
	return out
}

func (s *jsonScanner) key() string {
	k := s.str()
	return k
}

// stringEnd moves past the closing quote of a string whose opening quote
// was consumed and returns the position after it.
func (s *jsonScanner) stringEnd() int {
	for {
		i := bytes.IndexAny(s.b[s.pos:], "\"\\")
		if i < 0 {
			panic(errFallback)
		}
		s.pos += i
		if s.b[s.pos] == '\\' {
			s.pos += 2
			continue
		}
		s.pos++
		return s.pos
	}
}

// skip moves past one value of any type.
func (s *jsonScanner) skip() {
	switch s.peek() {
	case '"':
		s.pos++
		s.stringEnd()
	case '{', '[':
		depth := 0
		for s.pos < len(s.b) {
			switch s.b[s.pos] {
			case '"':
				s.pos++
				s.stringEnd()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos++
					return
				}
			}
			s.pos++
		}
		panic(errFallback)
	default:
		for s.pos < len(s.b) {
			switch s.b[s.pos] {
			case ',', '}', ']', ' ', '\n', '\t', '\r':
				return
			}
			s.pos++
		}
	}
}

func (s *jsonScanner) metadata(h *Head) {
	if s.peek() == 'n' { // null
		s.skip()
		return
	}
	s.object(func(key string) bool {
		switch key {
		case "name":
			h.Metadata.Name = s.str()
		case "generateName":
			h.Metadata.GenerateName = s.str()
		case "namespace":
			h.Metadata.Namespace = s.str()
		case "labels":
			h.Metadata.Labels = s.stringMap()
		case "annotations":
			h.Metadata.Annotations = s.stringMap()
		default:
			s.skip()
		}
		return true
	})
}

func (s *jsonScanner) stringMap() map[string]string {
	if s.peek() == 'n' {
		s.skip()
		return nil
	}
	m := map[string]string{}
	s.object(func(key string) bool { m[key] = s.str(); return true })
	return m
}

// object reads an object, calling value for each key with the scanner at
// the value, until value returns false (then the rest is not read).
func (s *jsonScanner) object(value func(key string) (more bool)) {
	s.expect('{')
	for first := true; ; first = false {
		s.ws()
		if s.peek() == '}' {
			s.pos++
			return
		}
		if !first {
			s.expect(',')
			s.ws()
		}
		k := s.key()
		s.ws()
		s.expect(':')
		s.ws()
		if !value(k) {
			return
		}
	}
}
