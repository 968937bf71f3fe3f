package insights

import (
	"bytes"
	"encoding/json"
	"strings"
)

// scanHead reads apiVersion, kind and metadata (name, generateName,
// namespace, labels, annotations) from a JSON object without decoding the
// rest, and stops as soon as it has what it needs: apiVersion and kind
// only when typed reports that the kind is decoded into its Go type (which
// has the metadata), else those and metadata. A List (an "items" key) is
// reported by items. ok is false whenever it meets something it does not
// handle — a value of an unexpected type, an escape in a key — and the
// caller then decodes with encoding/json, which also words the error.
func scanHead(js []byte, typed func(apiVersion, kind string) bool) (h head, items, ok bool) {
	s := jsonScanner{b: js}
	defer fallBack(&ok)
	s.ws()
	s.expect('{')
	haveAPI, haveKind, haveMeta := false, false, false
	for first := true; ; first = false {
		s.ws()
		if s.peek() == '}' {
			s.pos++
			break
		}
		if !first {
			s.expect(',')
			s.ws()
		}
		key := s.key()
		s.ws()
		s.expect(':')
		s.ws()
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
		if haveAPI && haveKind && !items && !strings.HasSuffix(h.Kind, "List") && (haveMeta || typed(h.APIVersion, h.Kind)) {
			return h, false, true
		}
	}
	return h, items, true
}

type fallbackError struct{}

var errFallback = &fallbackError{}

// fallBack, deferred by a fast path (the JSON head and List scanners),
// turns the errFallback panic of something the path does not handle into
// *ok = false, so that the caller takes the general decoder; any other
// panic goes on.
func fallBack(ok *bool) {
	if r := recover(); r != nil {
		if r != errFallback {
			panic(r)
		}
		*ok = false
	}
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

func (s *jsonScanner) metadata(h *head) {
	if s.peek() == 'n' { // null
		s.skip()
		return
	}
	s.object(func(key string) {
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
	})
}

func (s *jsonScanner) stringMap() map[string]string {
	if s.peek() == 'n' {
		s.skip()
		return nil
	}
	m := map[string]string{}
	s.object(func(key string) { m[key] = s.str() })
	return m
}

// object reads an object, calling value for each key with the scanner at
// the value.
func (s *jsonScanner) object(value func(key string)) {
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
		value(k)
	}
}
