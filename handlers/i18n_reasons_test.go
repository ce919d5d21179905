package handlers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"workbench/templates/i18n"
)

// reasonFormats finds the formats of every call to reasonf / Reasonf
// (models.Reasonf and the orchestrator packages' own) in the Go source
// under dirs, as "format" → "file:line". A call whose format is not a
// literal is reported in bad, unless it only forwards a format parameter
// (a wrapper such as pinReservation's badReservation, whose callers pass literals —
// their formats are collected by the name in wrappers).
func reasonFormats(t *testing.T, files map[string][]byte, wrappers map[string]bool) (formats map[string]string, bad []string) {
	t.Helper()
	formats = map[string]string{}
	fset := token.NewFileSet()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, files[n], 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			name := callName(call.Fun)
			if name != "reasonf" && name != "Reasonf" && name != "models.Reasonf" && !wrappers[name] {
				return true
			}
			pos := fset.Position(call.Pos())
			where := fmt.Sprintf("%s:%d", pos.Filename, pos.Line)
			switch a := call.Args[0].(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(a.Value); err == nil && a.Kind == token.STRING {
					formats[s] = where
					return true
				}
			case *ast.Ident:
				if a.Name == "format" {
					return true // a wrapper forwarding its callers' literal
				}
			}
			bad = append(bad, where+": "+name+" needs a literal format")
			return true
		})
	}
	return formats, bad
}

// goSources reads the non-test Go files under dir (recursively).
func goSources(t *testing.T, dir string, into map[string][]byte) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		into[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReasonFormatsTranslated fails naming file:line when a text the
// layers below the pages word for people (a refusal, a quota message, a
// stop, queue or failure reason, built with reasonf / models.Reasonf) has
// a format that is not a key of the reasons catalog — the pages recognise
// a reason by its format (i18n.Reason), so a Chinese reader would get it
// in English — or lacks its zh-CN text.
func TestReasonFormatsTranslated(t *testing.T) {
	files := map[string][]byte{}
	for _, dir := range []string{"../orchestrator", "../models", "."} {
		goSources(t, dir, files)
	}
	formats, bad := reasonFormats(t, files, map[string]bool{"badReservation": true})
	for _, b := range bad {
		t.Error(b)
	}
	if len(formats) < 80 {
		t.Fatalf("found only %d reason formats: the scan is broken", len(formats))
	}
	reasons := i18n.ReasonKeys()
	zh := map[string]bool{}
	for _, k := range i18n.Keys(i18n.Chinese) {
		zh[k] = true
	}
	var missing []string
	for f, where := range formats {
		switch {
		case !reasons[f]:
			missing = append(missing, fmt.Sprintf("%s: %q is not in templates/i18n/locales/zh-CN/reasons.json", where, f))
		case !zh[f]:
			missing = append(missing, fmt.Sprintf("%s: %q has no zh-CN translation", where, f))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
}

// The scan finds literal formats, forwarded ones, and refuses a built one.
func TestReasonFormatsScan(t *testing.T) {
	src := `package orchestrator

func x(format string, n int, s string) {
	_ = reasonf("stopped after %s", s)
	_ = models.Reasonf("quota exceeded: %d", n)
	_ = reasonf(format, n)
	_ = badReservation("reservation #%s is over", s)
	_ = reasonf("built " + s)
}
`
	formats, bad := reasonFormats(t, map[string][]byte{"x.go": []byte(src)}, map[string]bool{"badReservation": true})
	for _, want := range []string{"stopped after %s", "quota exceeded: %d", "reservation #%s is over"} {
		if _, ok := formats[want]; !ok {
			t.Errorf("format %q not found in %v", want, formats)
		}
	}
	if len(formats) != 3 || len(bad) != 1 || !strings.Contains(bad[0], "x.go:8") {
		t.Errorf("formats %v, bad %v: want 3 formats and the built one refused", formats, bad)
	}
}
