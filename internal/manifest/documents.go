package manifest

import "bytes"

// Document is one document of a YAML (or JSON) stream.
type Document struct {
	// Line is the 1-based line, in the stream, of Body's first line.
	Line int
	// Body shares the stream's memory.
	Body []byte
}

// SplitDocuments splits a stream into documents at separator lines, as
// k8s.io/apimachinery/pkg/util/yaml's YAMLReader does: a line that starts
// with "---" followed only by whitespace. Documents holding only comments
// and whitespace are dropped, and leading comment and blank lines are left
// out of a document, so its Line is the line its content starts on: a
// finding about the object points at the object, not at the comments
// above it. The bodies share data's memory.
func SplitDocuments(data []byte) []Document {
	return splitStream(data, true)
}

// splitStream is SplitDocuments; trimLeading says whether leading comment
// lines are left out of each document (Decode keeps them, and its lines
// start after the separator).
func splitStream(data []byte, trimLeading bool) []Document {
	var docs []Document
	start, startLine, line := 0, 1, 1
	flush := func(end int) {
		body, line := data[start:end], startLine
		if !hasContent(body) {
			return
		}
		for trimLeading {
			i := bytes.IndexByte(body, '\n')
			if i < 0 {
				break
			}
			if t := bytes.TrimSpace(body[:i]); len(t) > 0 && t[0] != '#' {
				break
			}
			body, line = body[i+1:], line+1
		}
		docs = append(docs, Document{Line: line, Body: body})
	}
	for pos := 0; pos < len(data); line++ {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		if l := data[pos:next]; len(l) >= 3 && l[0] == '-' && l[1] == '-' && l[2] == '-' && len(bytes.TrimSpace(l[3:])) == 0 {
			flush(pos)
			start, startLine = next, line+1
		}
		pos = next
	}
	flush(len(data))
	return docs
}

// hasContent reports whether doc has a line that is neither blank nor a
// comment.
func hasContent(doc []byte) bool {
	for len(doc) > 0 {
		i := bytes.IndexByte(doc, '\n')
		l := doc
		if i >= 0 {
			l, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}
