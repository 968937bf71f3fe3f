package insights

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// StdinName is the file name findings give objects read from standard input.
const StdinName = "<stdin>"

// ManifestExtensions are the file extensions read from directories.
var ManifestExtensions = []string{".yaml", ".yml", ".json"}

// ReadPaths reads manifests as kubectl -f does: each path is a file, a
// directory (read recursively: every *.yaml, *.yml and *.json file, in
// lexical order, skipping directories whose name starts with ".") or "-"
// for stdin. A file given by name is read whatever its extension.
//
// It returns an error — Ladder cannot run — when a named path does not
// exist or cannot be read, or a directory holds no manifest files. A file
// found in a directory that cannot be read, and every document that does
// not decode, is a Problem instead: the scan goes on with the rest.
func ReadPaths(paths []string, stdin io.Reader) ([]*Object, []Problem, error) {
	// Documents are gathered from every file first and decoded together,
	// in parallel, so a repository of many small files uses every core.
	type fileDoc struct {
		file string
		doc  document
	}
	var docs []fileDoc
	var problems []Problem
	add := func(file string, data []byte) {
		for _, d := range splitDocuments(data) {
			docs = append(docs, fileDoc{file, d})
		}
	}
	readStdin := false
	for _, path := range paths {
		if path == "-" {
			if readStdin {
				return nil, nil, errors.New(`-f -: standard input can be read only once`)
			}
			readStdin = true
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, nil, fmt.Errorf("-f -: reading standard input: %w", err)
			}
			add(StdinName, data)
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			return nil, nil, fmt.Errorf("-f %s: %s", path, describeFSError(err))
		}
		if !info.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, nil, fmt.Errorf("-f %s: %s", path, describeFSError(err))
			}
			add(path, data)
			continue
		}
		found := 0
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == path {
					return err
				}
				problems = append(problems, Problem{Source: Source{File: p}, Severity: Error,
					Message: "cannot read: " + describeFSError(err) + "; its manifests were not checked", Fix: "make it readable or leave it out"})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != path && strings.HasPrefix(d.Name(), ".") {
					return fs.SkipDir
				}
				return nil
			}
			if !isManifestFile(d.Name()) {
				return nil
			}
			found++
			data, err := os.ReadFile(p)
			if err != nil {
				problems = append(problems, Problem{Source: Source{File: p}, Severity: Error,
					Message: "cannot read: " + describeFSError(err) + "; its manifests were not checked", Fix: "make it readable or leave it out"})
				return nil
			}
			add(p, data)
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("-f %s: %s", path, describeFSError(err))
		}
		if found == 0 {
			return nil, nil, fmt.Errorf("-f %s: the directory holds no %s files", path, strings.Join(ManifestExtensions, ", "))
		}
	}
	objs, decodeProblems := decodeAll(len(docs), func(i int) ([]*Object, []Problem) {
		return decodeDocument(Source{File: docs[i].file, Line: docs[i].doc.line}, docs[i].doc.body, nil)
	})
	return objs, append(problems, decodeProblems...), nil
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
