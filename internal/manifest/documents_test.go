package manifest

import "testing"

func TestSplitDocuments(t *testing.T) {
	docs := SplitDocuments([]byte("---\na: 1\n--- \nb: 2\n---x\nc: 3\n# only a comment\n---\n\n---\n"))
	if len(docs) != 2 || docs[0].Line != 2 || docs[1].Line != 4 || string(docs[1].Body) != "b: 2\n---x\nc: 3\n# only a comment\n" {
		t.Fatalf("got %+v", docs)
	}
	// Leading comments are left out of SplitDocuments' documents, kept by Decode's.
	data := []byte("a: 1\n---\n# about b\n\nb: 2\n")
	if docs := SplitDocuments(data); len(docs) != 2 || docs[1].Line != 5 || string(docs[1].Body) != "b: 2\n" {
		t.Fatalf("got %+v", docs)
	}
	if docs := splitStream(data, false); len(docs) != 2 || docs[1].Line != 3 || string(docs[1].Body) != "# about b\n\nb: 2\n" {
		t.Fatalf("got %+v", docs)
	}
}
