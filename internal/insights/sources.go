package insights

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/ladder-eks/ladder/internal/manifest"
)

// StdinName is the file name findings give objects read from standard input.
const StdinName = "<stdin>"

// ManifestExtensions are the file extensions read from directories.
var ManifestExtensions = []string{".yaml", ".yml", ".json"}

// Manifests is what ReadPaths read: the objects, the documents (or fields)
// that could not be read, and the files it skipped.
type Manifests struct {
	Objects  []*Object
	Problems []Problem
	Skipped  SkippedFiles
}

// SkippedFiles counts the files ReadPaths did not check, by reason. A
// repository holds more than manifests — Chart.yaml and values files, CI
// configurations, JSON schemas and dashboards, Helm templates — and none of
// them is an error.
type SkippedFiles struct {
	// NotManifests are YAML or JSON files none of whose documents has
	// apiVersion and kind (Chart.yaml, values.yaml, docker-compose.yml, a
	// JSON schema), and files of tools' configurations — kustomization
	// files, kind and eksctl configurations, kubeconfigs (toolConfigs) —
	// which their tool reads and the API server never sees.
	NotManifests int `json:"notManifests,omitempty"`
	// Templates are files in a directory that hold unrendered Helm or Go
	// template source ("{{ … }}") that is not YAML: only their rendered
	// output can be checked.
	Templates int `json:"templates,omitempty"`
	// Special are named pipes, sockets and devices found in a directory
	// under a manifest's name: they are not opened.
	Special int `json:"specialFiles,omitempty"`
}

// Total is the number of files skipped.
func (s SkippedFiles) Total() int { return s.NotManifests + s.Templates + s.Special }

// Add adds o's counts to s.
func (s *SkippedFiles) Add(o SkippedFiles) {
	s.NotManifests += o.NotManifests
	s.Templates += o.Templates
	s.Special += o.Special
}

// ReadPaths reads manifests as kubectl -f does: each path is a file, a
// directory (read recursively: every *.yaml, *.yml and *.json file, in
// lexical order, skipping the directories skippedDir names) or "-"
// for stdin. A file given by name is read whatever its extension.
//
// It returns an error — Ladder cannot run — when a named path does not
// exist, cannot be read, is not a regular file or a directory (a named
// pipe, a device), is over manifest.MaxInputSize, or is a directory with no
// manifest files. A file found in a directory that cannot be read, and
// every document that does not decode, is a Problem instead: the scan goes
// on with the rest. Files that are not manifests are counted in Skipped.
//
// Documents are read as a stream: files are read and split by one
// goroutine, decoded by GOMAXPROCS workers, and joined in input order, so
// memory holds the decoded objects and a window of documents in flight,
// not the tree's bytes.
//
// A directory with a kustomization file is built as `kubectl apply -k`
// builds it, and a directory with Chart.yaml is rendered as `helm template`
// renders it (internal/render): the rendered objects are checked, each at
// the source file and line it came from, and the files the render read are
// not read again as manifests. ReadPaths renders charts with their default
// values and Helm's default Kubernetes version; Read takes the options.
func ReadPaths(paths []string, stdin io.Reader) (*Manifests, error) {
	return Read(paths, stdin, ReadOptions{})
}

// Read is ReadPaths with the options that build kustomizations and charts.
func Read(paths []string, stdin io.Reader, opts ReadOptions) (*Manifests, error) {
	// Named paths are checked before anything is read, so a bad one fails
	// at once, with nothing else printed.
	readStdin := false
	for _, path := range paths {
		if path == "-" {
			if readStdin {
				return nil, errors.New(`-f -: standard input can be read only once`)
			}
			readStdin = true
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("-f %s: %s", path, describeFSError(err))
		}
		if !info.IsDir() && !info.Mode().IsRegular() {
			return nil, fmt.Errorf("-f %s: %s; give a file or a directory, or pipe it to standard input: ... | ladder check -f -",
				path, (&manifest.NotRegularError{Mode: info.Mode()}).Error())
		}
	}
	s := newStream()
	s.opts = opts
	var failure error
	go func() {
		defer s.close()
		for _, path := range paths {
			if failure = s.readPath(path, stdin); failure != nil {
				return
			}
		}
	}()
	m := s.collect()
	if failure != nil {
		return nil, failure
	}
	return m, nil
}

// stream is the pipeline ReadPaths runs: a producer (the walk) reads
// files and queues their documents in chunks, workers decode the chunks,
// and collect joins the results in the order they were queued.
type stream struct {
	opts  ReadOptions
	jobs  chan *chunk
	order chan *chunk
	// pending is the chunk the producer is filling.
	pending *chunk
	// inFlight bounds the bytes of files read but not yet collected, so a
	// tree of large files is not read faster than it is decoded.
	mu       sync.Mutex
	cond     *sync.Cond
	inFlight int64
	workers  sync.WaitGroup

	// built is, for each source document a kustomization build produced
	// an object from ("file:line"), the kustomization that built it
	// first; warned holds the render warnings already queued. The walk
	// alone uses them: no lock.
	built  map[string]string
	warned map[string]bool
}

// chunk is a run of entries — the documents of one or more files, and
// the outcomes of files that are not decoded — handed to one worker: small
// files go many to a chunk, a large file over several.
type chunk struct {
	entries []entry
	docs    int
	bytes   int
	done    chan struct{}
}

// entry is one document to decode, or a file's end (which may be all
// there is of it: a read problem, a skipped file, an empty file).
type entry struct {
	file  *fileRead
	doc   manifest.Document
	isDoc bool
	end   bool
	// result is the document's, once a worker is done.
	result docResult
}

// fileRead is a file (or standard input) in the stream.
type fileRead struct {
	name  string
	named bool // named by -f or standard input, not found in a directory
	// onDisk: the file can be read again (not standard input, not a
	// render), so its documents' text is not held.
	onDisk bool
	size   int64 // its bytes in flight, released when it is collected
	// Set for files that are not decoded.
	problem *Problem
	skipped SkippedFiles
	// literal is an apiVersion/kind pair found in a template source.
	literal *Object
}

type docResult struct {
	objs     []*Object
	problems []Problem
}

const (
	// chunkDocs and chunkBytes bound a chunk: enough to amortise the
	// hand-over, small enough that one large file keeps every core busy.
	chunkDocs  = 32
	chunkBytes = 256 << 10
	// maxInFlight bounds the bytes of files read ahead of the collector
	// (give or take the file just read: a file larger than this is read
	// alone). 16 MiB keeps both cores busy; 128 MiB read no faster and
	// added a third to the peak memory of a 190,000-file tree.
	maxInFlight = manifest.MaxInputSize / 4
)

func newStream() *stream {
	workers := runtime.GOMAXPROCS(0)
	window := 4 * workers
	s := &stream{jobs: make(chan *chunk, window), order: make(chan *chunk, window)}
	s.cond = sync.NewCond(&s.mu)
	for range workers {
		s.workers.Go(func() {
			for c := range s.jobs {
				for i := range c.entries {
					e := &c.entries[i]
					if !e.isDoc {
						continue
					}
					objs, problems := decodeDocument(Source{File: e.file.name, Line: e.doc.Line}, e.doc.Body, nil)
					for j := range problems {
						settleProblem(&problems[j])
					}
					dropMetadataMaps(objs)
					if e.file.onDisk {
						releaseDocs(objs)
					}
					e.result = docResult{objs, problems}
				}
				close(c.done)
			}
		})
	}
	return s
}

// close ends the stream: no more chunks.
func (s *stream) close() {
	s.flush()
	close(s.jobs)
	close(s.order)
}

// add appends an entry to the pending chunk, queueing the chunk when full.
func (s *stream) add(e entry) {
	if s.pending == nil {
		s.pending = &chunk{}
	}
	c := s.pending
	c.entries = append(c.entries, e)
	if e.isDoc {
		c.docs++
		c.bytes += len(e.doc.Body)
	}
	if c.docs >= chunkDocs || c.bytes >= chunkBytes {
		s.flush()
	}
}

// flush hands the pending chunk to the workers, keeping its place in the
// order.
func (s *stream) flush() {
	c := s.pending
	if c == nil {
		return
	}
	s.pending = nil
	c.done = make(chan struct{})
	s.order <- c
	s.jobs <- c
}

// outcome queues a file that is not decoded.
func (s *stream) outcome(f *fileRead) { s.add(entry{file: f, end: true}) }

// reserve waits until size more bytes, read already, may be in flight —
// so that no more is read until then. The pending chunk
// is queued first when it must wait: the bytes it holds are released only
// once it is collected.
func (s *stream) reserve(size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight > 0 && s.inFlight+size > maxInFlight {
		s.mu.Unlock()
		s.flush()
		s.mu.Lock()
		for s.inFlight > 0 && s.inFlight+size > maxInFlight {
			s.cond.Wait()
		}
	}
	s.inFlight += size
}

func (s *stream) release(size int64) {
	s.mu.Lock()
	s.inFlight -= size
	s.cond.Broadcast()
	s.mu.Unlock()
}

// file queues the documents of one file's data, whose bytes are reserved.
// onDisk says the file can be read again: standard input cannot.
func (s *stream) file(name string, named, onDisk bool, data []byte) {
	f := &fileRead{name: name, named: named, onDisk: onDisk, size: int64(len(data))}
	docs := manifest.SplitDocuments(data)
	if len(docs) == 0 {
		s.add(entry{file: f, end: true})
		return
	}
	for i, d := range docs {
		s.add(entry{file: f, doc: d, isDoc: true, end: i == len(docs)-1})
	}
}

// readPath reads one -f argument: a file, a directory or "-".
func (s *stream) readPath(path string, stdin io.Reader) error {
	if path == "-" {
		data, err := manifest.ReadAll(stdin)
		switch {
		case errors.Is(err, manifest.ErrTooLarge):
			return fmt.Errorf("-f -: standard input is %v; split it, e.g. into files in a directory, and check that", err)
		case err != nil:
			return fmt.Errorf("-f -: reading standard input: %w", err)
		}
		s.reserve(int64(len(data)))
		s.file(StdinName, true, false, data)
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("-f %s: %s", path, describeFSError(err))
	}
	if !info.IsDir() {
		data, err := manifest.ReadFile(path)
		if err != nil {
			if errors.Is(err, manifest.ErrTooLarge) {
				return fmt.Errorf("-f %s: the file is %v; split it into smaller files", path, err)
			}
			return fmt.Errorf("-f %s: %s", path, describeFSError(err))
		}
		s.reserve(int64(len(data)))
		s.file(path, true, true, data)
		return nil
	}
	found := 0
	if err := s.readDirectory(path, true, &found); err != nil {
		return fmt.Errorf("-f %s: %s", path, describeFSError(err))
	}
	if found == 0 {
		return fmt.Errorf("-f %s: the directory holds no %s files", path, strings.Join(ManifestExtensions, ", "))
	}
	return nil
}

// readDirectory reads one directory of a walk: its manifest files and
// subdirectories, in lexical order (as filepath.WalkDir visits them). It
// is the step where a directory could be handed to something else as a
// whole — a kustomization or a Helm chart rendered before it is checked.
// An error is returned only for the top directory; below it, a directory
// that cannot be read is a Problem.
func (s *stream) readDirectory(dir string, top bool, found *int) error {
	consumed, chart, rendered, err := s.renderDirectory(dir)
	if err != nil {
		return err
	}
	if rendered {
		*found++ // a kustomization or chart is something to check
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if top {
			return err
		}
		s.outcome(&fileRead{name: dir, problem: unreadable(dir, err)})
		// os.ReadDir returns the entries it read before the error; as
		// filepath.WalkDir, do not go on with them.
		return nil
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if rendered && skipRendered(p, e, consumed, chart) {
			continue
		}
		if e.IsDir() {
			if skippedDir(e.Name()) {
				continue
			}
			if err := s.readDirectory(p, false, found); err != nil {
				return err
			}
			continue
		}
		if !isManifestFile(e.Name()) {
			continue
		}
		*found++
		s.readFound(p, e)
	}
	return nil
}

// readFound reads a file found in a directory. Special files are skipped
// without being opened: a named pipe would block, a device never end.
func (s *stream) readFound(p string, e fs.DirEntry) {
	read := manifest.ReadRegularFile
	if !e.Type().IsRegular() {
		info, err := os.Stat(p) // follows a symbolic link, as reading it would
		if err != nil {
			s.outcome(&fileRead{name: p, problem: unreadable(p, err)})
			return
		}
		if !info.Mode().IsRegular() {
			s.outcome(&fileRead{name: p, skipped: SkippedFiles{Special: 1}})
			return
		}
		read = manifest.ReadFile
	}
	data, err := read(p)
	var special *manifest.NotRegularError
	switch {
	case errors.As(err, &special):
		s.outcome(&fileRead{name: p, skipped: SkippedFiles{Special: 1}})
	case errors.Is(err, manifest.ErrTooLarge):
		s.outcome(&fileRead{name: p, problem: &Problem{Source: Source{File: p}, Severity: Error,
			Message: "not read: the file is " + err.Error() + "; its manifests were not checked",
			Fix:     "split it into smaller files, or leave it out"}})
	case err != nil:
		s.outcome(&fileRead{name: p, problem: unreadable(p, err)})
	default:
		s.reserve(int64(len(data)))
		s.file(p, false, true, data)
	}
}

func unreadable(p string, err error) *Problem {
	return &Problem{Source: Source{File: p}, Severity: Error,
		Message: "cannot read: " + describeFSError(err) + "; its manifests were not checked", Fix: "make it readable or leave it out"}
}

// collect joins the chunks in the order they were queued and decides,
// file by file, what is kept.
func (s *stream) collect() *Manifests {
	m := &Manifests{}
	share := stringTable{}
	var file []docResult
	for c := range s.order {
		<-c.done
		for i := range c.entries {
			e := &c.entries[i]
			if e.isDoc {
				file = append(file, e.result)
			}
			if !e.end {
				continue
			}
			f := e.file
			s.release(f.size)
			switch {
			case f.problem != nil:
				m.Problems = append(m.Problems, *f.problem)
			case f.literal != nil:
				m.Objects = append(m.Objects, f.literal)
			case f.skipped.Total() > 0:
				m.Skipped.Add(f.skipped)
			default:
				keepFile(m, f.named, file, share)
			}
			clear(file)
			file = file[:0]
		}
		c.entries = nil
	}
	s.workers.Wait()
	return m
}

// keepFile adds a file's objects and problems to m, or counts it as
// skipped: a file with no document that has apiVersion and kind is not a
// manifest, and a file found in a directory that holds unrendered template
// source is a template. A file named on the command line (or standard
// input) is the user's choice: its template documents are reported.
func keepFile(m *Manifests, named bool, docs []docResult, share stringTable) {
	objects, templates := 0, 0
	for _, d := range docs {
		switch documentCause(d) {
		case causeTemplate:
			templates++
		case causeNotObject:
		default:
			objects++
		}
	}
	switch {
	case templates > 0 && !named:
		m.Skipped.Templates++
		return
	case objects == 0 && templates == 0:
		m.Skipped.NotManifests++
		return
	}
	for _, d := range docs {
		for _, o := range d.objs {
			o.APIVersion, o.Kind, o.Namespace = share.of(o.APIVersion), share.of(o.Kind), share.of(o.Namespace)
		}
		m.Objects = append(m.Objects, d.objs...)
		m.Problems = append(m.Problems, d.problems...)
	}
}

// stringTable shares the strings many objects repeat — apiVersions,
// kinds, namespaces — so 200,000 objects hold a few hundred copies, not
// 600,000. collect alone uses it: no lock.
type stringTable map[string]string

func (t stringTable) of(s string) string {
	if shared, ok := t[s]; ok {
		return shared
	}
	t[s] = s
	return s
}

// documentCause says what a decoded document is: causeTemplate or
// causeNotObject when a problem says so, causeNotObject for a
// kustomization (which only kustomize reads), else causeOther — an object,
// or a document that should have been one (malformed YAML: it may hide a
// manifest).
func documentCause(d docResult) problemCause {
	cause := causeOther
	for _, p := range d.problems {
		if p.cause != causeOther {
			cause = p.cause
		}
	}
	if cause == causeOther && len(d.objs) > 0 {
		cause = causeNotObject
		for _, o := range d.objs {
			if !buildConfig(o.APIVersion, o.Kind) {
				cause = causeOther
			}
		}
	}
	return cause
}

// buildConfig reports whether a kind is a tool's configuration rather
// than an object for the API server: kustomize's Kustomization and
// Component (read by kustomize build, never applied), a kind or eksctl
// cluster configuration, a kubeconfig, ... (toolConfigs).
func buildConfig(apiVersion, kind string) bool { return toolConfig(apiVersion, kind) }

func isManifestFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range ManifestExtensions {
		if ext == e {
			return true
		}
	}
	return false
}

func describeFSError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
