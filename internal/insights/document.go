package insights

import (
	"hash/maphash"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// docText is the text of the document an object or problem was read from,
// which a finding needs only to point at a field's line (SARIF). A
// document read from a file on disk is not held: a tree of 200,000
// documents would keep its every byte alive for the few findings that are
// written with a field's line. It is read again from the file instead, and
// found by its line; sum tells it from a document the file holds now if
// the file changed since, and then the finding points at its object's line.
type docText struct {
	held []byte
	// sum is the hash of a document not held; 0 when held (or none).
	sum uint64
}

// docSeed seeds the hashes of documents not held; one per process, as the
// documents are read again by the same process.
var docSeed = maphash.MakeSeed()

// releaseDocs drops the document text of objects read from a file on disk,
// keeping its hash to find it again.
func releaseDocs(objs []*Object) {
	for _, o := range objs {
		if o.Doc != nil {
			o.docSum = maphash.Bytes(docSeed, o.Doc) | 1 // never 0: 0 means held
			o.Doc = nil
		}
	}
}

// docFiles reads documents again, keeping the last file read: findings
// about one file are written one after another.
type docFiles struct {
	name string
	docs []manifest.Document
}

// text returns the document that starts at src's line, or nil.
func (d docText) text(src Source, files *docFiles) []byte {
	if d.sum == 0 {
		return d.held
	}
	if files == nil {
		files = &docFiles{}
	}
	if files.name != src.File || files.docs == nil {
		files.name, files.docs = src.File, nil
		data, err := manifest.ReadFile(src.File)
		if err != nil {
			return nil
		}
		files.docs = manifest.SplitDocuments(data)
	}
	for _, doc := range files.docs {
		if doc.Line == src.Line {
			if maphash.Bytes(docSeed, doc.Body)|1 == d.sum {
				return doc.Body
			}
			return nil
		}
	}
	return nil
}
