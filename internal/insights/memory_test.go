package insights

import (
	"runtime"
	"testing"
)

// TestHeapPerDocument: the objects ReadPaths returns hold at most
// maxHeldPerDoc bytes of heap per document read, so that a repository of
// 200,000 documents is checked in a few hundred megabytes. Objects keep
// their metadata and, for the kinds checks read in depth, a summary of
// what they read (summary.go), with label sets as sorted slices; a
// document's text and an object's own labels and annotations are not
// held; the strings objects repeat are shared. Holding a workload's
// upstream object again (about 1,070 bytes a document on this corpus)
// fails it, as does keeping labels in maps (about 490); today it is about
// 405. The heap is measured after a collection, before and after the
// read, so it counts only what is kept.
func TestHeapPerDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 4,200 documents")
	}
	const files, docs = 4_000, 4_200
	const maxHeldPerDoc = 470
	dir := t.TempDir()
	writeManifestTree(t, dir, files, docs)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := ReadPaths([]string{dir}, nil)
	if err != nil || len(m.Objects) != docs || len(m.Problems) != 0 {
		t.Fatalf("%v: %d objects, %d problems", err, len(m.Objects), len(m.Problems))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / docs
	runtime.KeepAlive(m)
	t.Logf("%d bytes of heap held per document", held)
	if held > maxHeldPerDoc {
		t.Errorf("the objects read hold %d bytes of heap per document, more than %d: a check reading a 200,000-document repository needs that many times more memory", held, maxHeldPerDoc)
	}
}
