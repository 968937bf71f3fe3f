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
	// JSON schema), and kustomization files, which kustomize reads and
	// the API server never sees.
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
// lexical order, skipping directories whose name starts with ".") or "-"
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
func ReadPaths(paths []string, stdin io.Reader) (*Manifests, error) {
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

// stream is the pipeline ReadPaths runs: a producer (the walk) queues the
// documents of each file in chunks, workers decode them, and collect joins
// the results in the order they were queued.
type stream struct {
	jobs  chan *chunk
	order chan *chunk
	// inFlight bounds the bytes of files read but not yet collected, so a
	// tree of large files is not read faster than it is decoded.
	mu       sync.Mutex
	cond     *sync.Cond
	inFlight int64
	workers  sync.WaitGroup
}

// chunk is up to chunkDocs documents of one file (or a file's outcome
// that needs no decoding: a read problem, a skip).
type chunk struct {
	file  string
	named bool // named by -f or standard input, not found in a directory
	docs  []manifest.Document
	// last marks a file's last chunk; size is the file's, released then.
	last bool
	size int64
	// Set by the producer for files that are not decoded.
	problem *Problem
	skipped SkippedFiles
	// results holds one entry per document once a worker is done.
	done    chan struct{}
	results []docResult
}

type docResult struct {
	objs     []*Object
	problems []Problem
}

const (
	// chunkDocs is how many documents one job decodes: enough to amortise
	// the queueing, few enough that one large file keeps every core busy.
	chunkDocs = 32
	// maxInFlight bounds the bytes of files read ahead of the collector
	// (one file is always let through, however large).
	maxInFlight = 2 * manifest.MaxInputSize
)

func newStream() *stream {
	workers := runtime.GOMAXPROCS(0)
	window := 4 * workers
	s := &stream{jobs: make(chan *chunk, window), order: make(chan *chunk, window)}
	s.cond = sync.NewCond(&s.mu)
	for range workers {
		s.workers.Go(func() {
			for c := range s.jobs {
				c.results = make([]docResult, len(c.docs))
				for i, d := range c.docs {
					objs, problems := decodeDocument(Source{File: c.file, Line: d.Line}, d.Body, nil)
					for j := range problems {
						settleProblem(&problems[j])
					}
					c.results[i] = docResult{objs, problems}
				}
				close(c.done)
			}
		})
	}
	return s
}

// close ends the stream: no more chunks.
func (s *stream) close() {
	close(s.jobs)
	close(s.order)
}

// queue hands a chunk to the workers (or, done already, straight to the
// collector), keeping its place in the order.
func (s *stream) queue(c *chunk) {
	if c.done == nil {
		c.done = make(chan struct{})
		s.order <- c
		s.jobs <- c
		return
	}
	s.order <- c
}

// outcome queues a file's result that needs no decoding.
func (s *stream) outcome(c *chunk) {
	c.last, c.done = true, make(chan struct{})
	close(c.done)
	s.queue(c)
}

// reserve waits until size more bytes may be in flight.
func (s *stream) reserve(size int64) {
	s.mu.Lock()
	for s.inFlight > 0 && s.inFlight+size > maxInFlight {
		s.cond.Wait()
	}
	s.inFlight += size
	s.mu.Unlock()
}

func (s *stream) release(size int64) {
	s.mu.Lock()
	s.inFlight -= size
	s.cond.Broadcast()
	s.mu.Unlock()
}

// file queues the documents of one file's data.
func (s *stream) file(name string, named bool, data []byte) {
	size := int64(len(data))
	docs := manifest.SplitDocuments(data)
	if len(docs) == 0 {
		s.queue(&chunk{file: name, named: named, last: true, size: size})
		return
	}
	for start := 0; start < len(docs); start += chunkDocs {
		end := min(start+chunkDocs, len(docs))
		s.queue(&chunk{file: name, named: named, docs: docs[start:end:end], last: end == len(docs), size: size})
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
		s.file(StdinName, true, data)
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("-f %s: %s", path, describeFSError(err))
	}
	if !info.IsDir() {
		s.reserve(info.Size())
		data, err := manifest.ReadFile(path)
		if err != nil {
			s.release(info.Size())
			if errors.Is(err, manifest.ErrTooLarge) {
				return fmt.Errorf("-f %s: the file is %v; split it into smaller files", path, err)
			}
			return fmt.Errorf("-f %s: %s", path, describeFSError(err))
		}
		s.release(info.Size() - int64(len(data)))
		s.file(path, true, data)
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
	entries, err := os.ReadDir(dir)
	if err != nil {
		if top {
			return err
		}
		s.outcome(&chunk{file: dir, problem: unreadable(dir, err)})
		// os.ReadDir returns the entries it read before the error; as
		// filepath.WalkDir, do not go on with them.
		return nil
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") {
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
	var size int64
	if e.Type()&fs.ModeSymlink != 0 || !e.Type().IsRegular() {
		info, err := os.Stat(p) // follows a symbolic link, as reading it would
		if err != nil {
			s.outcome(&chunk{file: p, problem: unreadable(p, err)})
			return
		}
		if !info.Mode().IsRegular() {
			s.outcome(&chunk{file: p, skipped: SkippedFiles{Special: 1}})
			return
		}
		size = info.Size()
	} else if info, err := e.Info(); err == nil {
		size = info.Size()
	}
	s.reserve(size)
	data, err := manifest.ReadFile(p)
	if err != nil {
		s.release(size)
		var special *manifest.NotRegularError
		switch {
		case errors.As(err, &special):
			s.outcome(&chunk{file: p, skipped: SkippedFiles{Special: 1}})
		case errors.Is(err, manifest.ErrTooLarge):
			s.outcome(&chunk{file: p, problem: &Problem{Source: Source{File: p}, Severity: Error,
				Message: "not read: the file is " + err.Error() + "; its manifests were not checked",
				Fix:     "split it into smaller files, or leave it out"}})
		default:
			s.outcome(&chunk{file: p, problem: unreadable(p, err)})
		}
		return
	}
	s.release(size - int64(len(data)))
	s.file(p, false, data)
}

func unreadable(p string, err error) *Problem {
	return &Problem{Source: Source{File: p}, Severity: Error,
		Message: "cannot read: " + describeFSError(err) + "; its manifests were not checked", Fix: "make it readable or leave it out"}
}

// collect joins the chunks in the order they were queued and decides,
// file by file, what is kept.
func (s *stream) collect() *Manifests {
	m := &Manifests{}
	var file []docResult
	for c := range s.order {
		<-c.done
		if c.problem != nil {
			m.Problems = append(m.Problems, *c.problem)
		}
		m.Skipped.Add(c.skipped)
		file = append(file, c.results...)
		c.results, c.docs = nil, nil
		if !c.last {
			continue
		}
		s.release(c.size)
		if c.problem == nil && c.skipped.Total() == 0 {
			keepFile(m, c.named, file)
		}
		clear(file)
		file = file[:0]
	}
	s.workers.Wait()
	return m
}

// keepFile adds a file's objects and problems to m, or counts it as
// skipped: a file with no document that has apiVersion and kind is not a
// manifest, and a file found in a directory that holds unrendered template
// source is a template. A file named on the command line (or standard
// input) is the user's choice: its template documents are reported.
func keepFile(m *Manifests, named bool, docs []docResult) {
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
		m.Objects = append(m.Objects, d.objs...)
		m.Problems = append(m.Problems, d.problems...)
	}
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

// buildConfig reports whether a kind is a build tool's configuration rather
// than an object for the API server: kustomize's Kustomization and
// Component (kustomize.config.k8s.io, read by kustomize build, never
// applied).
func buildConfig(apiVersion, kind string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	return group == "kustomize.config.k8s.io" && (kind == "Kustomization" || kind == "Component")
}

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
