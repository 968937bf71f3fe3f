package scenario

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/ladder-eks/ladder/internal/manifest"
	"github.com/ladder-eks/ladder/internal/termtext"
)

//go:embed builtin
var builtinFS embed.FS

// Default is the scenario `ladder rehearse` runs with no --scenario.
const Default = "workshop"

// Builtins lists the built-in scenario names, sorted.
func Builtins() []string {
	entries, _ := builtinFS.ReadDir("builtin")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// BuiltinSource returns a built-in scenario's YAML, for `ladder scenario show`.
func BuiltinSource(name string) ([]byte, error) {
	b, err := builtinFS.ReadFile("builtin/" + name + "/scenario.yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in scenario %q (built-in: %s)", name, strings.Join(Builtins(), ", "))
	}
	return b, nil
}

// BuiltinDir is a built-in scenario's directory: its scenario.yaml and the
// manifest files it names.
func BuiltinDir(name string) (fs.FS, error) {
	if _, err := BuiltinSource(name); err != nil {
		return nil, err
	}
	return fs.Sub(builtinFS, "builtin/"+name)
}

// BuiltinFile reads one file of a built-in scenario, as written.
func BuiltinFile(name, file string) ([]byte, error) {
	dir, err := BuiltinDir(name)
	if err != nil {
		return nil, err
	}
	return fs.ReadFile(dir, path.Clean(file))
}

// Resolve loads NAME (a built-in scenario) or FILE (a path).
func Resolve(nameOrFile string) (*Scenario, error) {
	if nameOrFile == "" {
		nameOrFile = Default
	}
	if _, err := BuiltinSource(nameOrFile); err == nil {
		return LoadBuiltin(nameOrFile)
	}
	if strings.ContainsAny(nameOrFile, "/\\.") {
		return LoadFile(nameOrFile)
	}
	if _, err := os.Stat(nameOrFile); err == nil {
		return LoadFile(nameOrFile)
	}
	return nil, fmt.Errorf("%q is neither a built-in scenario (%s) nor a file", nameOrFile, strings.Join(Builtins(), ", "))
}

// LoadBuiltin loads a built-in scenario.
func LoadBuiltin(name string) (*Scenario, error) {
	data, err := BuiltinSource(name)
	if err != nil {
		return nil, err
	}
	dir, _ := BuiltinDir(name)
	return Parse("builtin:"+name, data, dir)
}

// LoadFile loads a scenario file; manifest files are read relative to it.
func LoadFile(file string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	return Parse(file, data, os.DirFS(filepath.Dir(file)))
}

var (
	goFieldRE  = regexp.MustCompile(`Go struct field [A-Za-z0-9_]+\.([A-Za-z0-9_.\[\]]+) of type (\S+)`)
	yamlLineRE = regexp.MustCompile(`line (\d+)`)
	quotedRE   = regexp.MustCompile(`"([^"]*)"`)
)

// decodeError turns a JSON decoding error into a one-line error naming the
// field and its line: a type error names the field (the index-free path the
// decoder reports is resolved against the YAML), a value a field's own
// decoder refused (a duration, a time) is found by its value.
func (sc *Scenario) decodeError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	field := manifest.FieldPath(err)
	if m := goFieldRE.FindStringSubmatch(msg); m != nil {
		field = m[1]
		msg = "wrong type: expected " + manifest.DescribeGoType(m[2])
		if got := regexp.MustCompile(`cannot unmarshal (\S+) into`).FindStringSubmatch(err.Error()); got != nil {
			msg += ", got " + got[1]
		}
	}
	if field != "" {
		if full, _ := manifest.Locate(sc.raw, field, ""); full != "" {
			field = full
		}
	} else if m := quotedRE.FindStringSubmatch(msg); m != nil {
		field, _ = manifest.Locate(sc.raw, "", m[1])
		if strings.HasPrefix(msg, "parsing time") {
			msg = fmt.Sprintf("%q is not a time (use RFC 3339 in UTC, e.g. \"2026-03-30T10:00:00Z\")", m[1])
		}
	}
	if strings.Contains(msg, "cannot unmarshal") && field == "" {
		msg = "the document is not a scenario (want apiVersion, kind, metadata and spec)"
	}
	return sc.errorf(field, "%s", msg)
}

// Parse decodes a scenario document strictly and the manifests it names.
// Every problem is reported, one line each, with the file and line.
func Parse(name string, data []byte, dir fs.FS) (*Scenario, error) {
	if line := secondDocument(data); line > 0 {
		return nil, fmt.Errorf("%s:%d: a scenario file is one YAML document, and a second one starts here (remove this \"---\" and what follows; manifests go in files named under spec.manifests)", name, line)
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		msg := manifest.YAMLErrorMessage(err)
		loc := name
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			loc = name + ":" + m[1]
		}
		return nil, fmt.Errorf("%s: malformed YAML: %s (fix the YAML syntax)", loc, strings.TrimPrefix(msg, "yaml: "))
	}
	sc := &Scenario{Path: name, raw: data, Ignored: map[string]int{}}
	strictErrs, err := kjson.UnmarshalStrict(js, sc)
	if err != nil {
		return nil, sc.decodeError(err)
	}
	var errs []error
	for _, se := range strictErrs {
		field := manifest.FieldPath(se)
		if strings.Contains(se.Error(), "unknown field") {
			errs = append(errs, sc.errorf(field, "unknown field (remove it or correct its spelling; see `ladder scenario validate --help`)"))
		} else {
			errs = append(errs, sc.errorf(field, "%s", se.Error()))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i, src := range sc.Spec.Manifests {
		field := fmt.Sprintf("spec.manifests[%d]", i)
		objs, err := sc.loadSource(src, field, dir)
		if err != nil {
			errs = append(errs, err)
		}
		sc.addObjects(objs)
	}
	sc.ActionObjects = map[int][]manifest.Object{}
	for i, a := range sc.Spec.Actions {
		if a.Apply == nil {
			continue
		}
		objs, err := sc.loadSource(*a.Apply, fmt.Sprintf("spec.actions[%d].apply", i), dir)
		if err != nil {
			errs = append(errs, err)
		}
		for _, o := range objs {
			if !o.Ignored {
				sc.ActionObjects[i] = append(sc.ActionObjects[i], o)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return sc, nil
}

// secondDocument is the line of a separator ("---" alone on its line, as
// k8s.io/apimachinery's YAMLReader splits streams) that starts a second
// document with content, or 0. The YAML decoder reads the first document
// only, so anything after it would be silently ignored.
func secondDocument(data []byte) int {
	content, sep := false, 0
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "---") && strings.TrimSpace(l[3:]) == "" {
			if content && sep == 0 {
				sep = i + 1
			}
			continue
		}
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			if sep > 0 {
				return sep
			}
			content = true
		}
	}
	return 0
}

func (sc *Scenario) addObjects(objs []manifest.Object) {
	for _, o := range objs {
		if o.Ignored {
			sc.Ignored[o.GVK.Kind]++
			continue
		}
		sc.Objects = append(sc.Objects, o)
	}
}

// loadSource decodes a file or inline manifest source.
func (sc *Scenario) loadSource(src Source, field string, dir fs.FS) ([]manifest.Object, error) {
	switch {
	case src.File != "" && src.Inline != "":
		return nil, sc.errorf(field, "set file or inline, not both")
	case src.File != "":
		if dir == nil {
			return nil, sc.errorf(field+".file", "files cannot be read here; use inline")
		}
		name := path.Clean(filepath.ToSlash(src.File))
		if !fs.ValidPath(name) {
			return nil, sc.errorf(field+".file", "%q is outside the scenario's directory: a manifest path must stay in the scenario directory (a relative path such as manifests/app.yaml, without ..)", src.File)
		}
		data, err := fs.ReadFile(dir, name)
		if err != nil {
			return nil, sc.errorf(field+".file", "cannot read %s: %v (paths are relative to the scenario file's directory)", src.File, errors.Unwrap(err))
		}
		return manifest.Decode(sc.displayPath(src.File), data)
	case src.Inline != "":
		return manifest.DecodeAt(sc.Path, manifest.LineOf(sc.raw, field+".inline")+1, []byte(src.Inline))
	}
	return nil, sc.errorf(field, "set file (a path relative to the scenario) or inline (YAML)")
}

func (sc *Scenario) displayPath(file string) string {
	if strings.HasPrefix(sc.Path, "builtin:") {
		return sc.Path + "/" + file
	}
	return filepath.Join(filepath.Dir(sc.Path), file)
}

// errorf formats a one-line error about a field of the scenario document.
func (sc *Scenario) errorf(field, format string, args ...any) error {
	loc := sc.Path
	if line := manifest.LineOf(sc.raw, field); line > 0 {
		loc = fmt.Sprintf("%s:%d", sc.Path, line)
	}
	// One line, inert on a terminal (termtext): the values come from the
	// scenario.
	if field == "" {
		return errors.New(termtext.Escape(fmt.Sprintf("%s: %s", loc, fmt.Sprintf(format, args...))))
	}
	return errors.New(termtext.Escape(fmt.Sprintf("%s: %s: %s", loc, field, fmt.Sprintf(format, args...))))
}

// Find returns the manifest of a kind with a namespace and name.
func (sc *Scenario) Find(kind, namespace, name string) (manifest.Object, bool) {
	for _, o := range sc.Objects {
		if o.GVK.Kind == kind && o.Object.GetName() == name && (namespace == "" || o.Object.GetNamespace() == namespace) {
			return o, true
		}
	}
	return manifest.Object{}, false
}
