// Package archtest holds tests about the code's shape: which package may
// import which. They read import lists with go/parser (no build, no
// subprocess), so they run in milliseconds under -short.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "workbench"

// layers, highest first. Dependencies flow down: a package may import its
// own layer and the ones below it, never one above. templates and static
// are the views handlers render and web serves, at the handlers' level.
var layers = []struct {
	name     string
	prefixes []string
}{
	{"cmd", []string{"cmd"}},
	{"web", []string{"web"}},
	{"handlers", []string{"handlers", "templates", "static"}},
	{"orchestrator", []string{"orchestrator"}},
	{"models", []string{"models"}},
}

// rank is the layer index of a package directory ("" for one outside the
// layering, such as internal/archtest itself).
func rank(dir string) (int, bool) {
	for i, l := range layers {
		for _, p := range l.prefixes {
			if dir == p || strings.HasPrefix(dir, p+"/") {
				return i, true
			}
		}
	}
	return 0, false
}

// imports maps every Go file of the module (tests included) to its
// imports, keyed by the file's directory relative to the module root.
func imports(t *testing.T) map[string]map[string][]string {
	t.Helper()
	root := moduleRoot(t)
	out := map[string]map[string][]string{} // dir → import path → files
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			if out[dir] == nil {
				out[dir] = map[string][]string{}
			}
			out[dir][p] = append(out[dir][p], filepath.Base(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Only models (and its sub-packages) touch the database.
func TestOnlyModelsImportsGorm(t *testing.T) {
	var bad []string
	for dir, imps := range imports(t) {
		if dir == "models" || strings.HasPrefix(dir, "models/") {
			continue
		}
		for p, files := range imps {
			if p == "gorm.io/gorm" || strings.HasPrefix(p, "gorm.io/") {
				bad = append(bad, dir+" imports "+p+" ("+strings.Join(files, ", ")+")")
			}
		}
	}
	report(t, "only models may import gorm", bad)
}

// No import runs upward: cmd → web → handlers → orchestrator → models.
// In particular handlers never imports web/...: web assembles handlers,
// not the other way round.
func TestImportsFlowDown(t *testing.T) {
	var bad []string
	for dir, imps := range imports(t) {
		from, ok := rank(dir)
		if !ok {
			continue
		}
		for p, files := range imps {
			rel, internal := strings.CutPrefix(p, module+"/")
			if !internal {
				continue
			}
			to, ok := rank(rel)
			if ok && to < from && knownUpward[dir+" → "+rel] {
				t.Logf("TODO (issue 11): known upward import %s → %s (%s)", dir, rel, strings.Join(files, ", "))
				continue
			}
			if ok && to < from {
				bad = append(bad, dir+" ("+layers[from].name+") imports "+rel+" ("+layers[to].name+") in "+strings.Join(files, ", "))
			}
		}
	}
	report(t, "imports must flow cmd → web → handlers → orchestrator → models", bad)
}

// knownUpward lists the upward imports that exist today and are still to
// be removed. Empty it as they go; a new one fails the test.
var knownUpward = map[string]bool{}

func report(t *testing.T, rule string, bad []string) {
	t.Helper()
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: %s", rule, b)
	}
}

// benchTools are programs run by make targets to measure the portal
// (make bench-load); they build the test images like tests do.
var benchTools = map[string]bool{"internal/benchload": true}

// Test support (images built for tests, the fake Jupyter) is for tests
// only: no product file imports it, only _test.go files and test support
// itself, and the harnesses that drive tests and benchmarks from outside
// (benchTools: never built into the workbench binary).
func TestOnlyTestsImportTestSupport(t *testing.T) {
	const support = "internal/testsupport"
	var bad []string
	for dir, imps := range imports(t) {
		if dir == support || strings.HasPrefix(dir, support+"/") || benchTools[dir] {
			continue
		}
		for p, files := range imps {
			if p != module+"/"+support && !strings.HasPrefix(p, module+"/"+support+"/") {
				continue
			}
			for _, f := range files {
				if !strings.HasSuffix(f, "_test.go") {
					bad = append(bad, dir+"/"+f+" imports "+p)
				}
			}
		}
	}
	report(t, "only tests may import "+support, bad)
}
