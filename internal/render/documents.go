package render

import (
	"bytes"
)

// document is one YAML document of a multi-document file.
type document struct {
	line   int // 1-based line of the document's first line with content
	offset int // byte offset of body in the data split
	body   []byte
}

// splitDocuments splits a stream into documents at separator lines the way
// k8s.io/apimachinery's YAMLReader does (a line starting with "---" and
// nothing else but whitespace), and as ladder's manifest reader does: a
// document's line is its first line that is not blank or a comment, and
// documents of only comments are dropped.
func splitDocuments(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	flush := func(end int) {
		body, l := data[start:end], startLine
		for len(body) > 0 {
			i := bytes.IndexByte(body, '\n')
			head := body
			if i >= 0 {
				head = body[:i]
			}
			if t := bytes.TrimSpace(head); len(t) > 0 && t[0] != '#' {
				docs = append(docs, document{line: l, offset: end - len(body), body: body})
				return
			}
			if i < 0 {
				return
			}
			body, l = body[i+1:], l+1
		}
	}
	for pos := 0; pos < len(data); line++ {
		next := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		if l := data[pos:next]; isSeparator(l) {
			flush(pos)
			start, startLine = next, line+1
		}
		pos = next
	}
	flush(len(data))
	return docs
}

func isSeparator(line []byte) bool {
	return len(line) >= 3 && line[0] == '-' && line[1] == '-' && line[2] == '-' &&
		len(bytes.TrimSpace(line[3:])) == 0
}
