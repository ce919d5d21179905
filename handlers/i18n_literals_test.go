package handlers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The browser-facing helpers of this package must be given text in the
// reader's language: a literal passed to them (as it is, concatenated, or
// through fmt.Sprintf) shows English on a Chinese page. JSON API messages
// are not checked: their code is the contract and they stay English.
//
// sinks maps a helper to the indexes of its arguments a person reads.
var sinks = map[string][]int{
	"h.flash":      {1},    // flash on the next page
	"h.flashError": {1},    // error flash on the next page
	"h.page":       {1},    // page title
	"h.workPage":   {1},    // page title
	"http.Error":   {1},    // plain-text page (the not-running fallback)
	"notebookPage": {3, 4}, // the notebook host's own pages: title, message
	"writeError":   {4, 5}, // the proxy's own pages (proxy/): title, message
}

// allowedLiterals are literals the check lets through, as "file.go: text".
// Each needs a reason; an entry that no longer matches fails the test.
var allowedLiterals = map[string]string{
	// (none yet)
}

// formatters are calls whose literal arguments end up in the text as
// they are; any other call (trc, i18n.T, trcMsg, unitTextT, …) is taken to
// produce the reader's language.
var formatters = map[string]bool{
	"fmt.Sprintf": true, "fmt.Sprint": true, "fmt.Sprintln": true,
	"strings.Join": true, "strings.TrimSpace": true, "strings.ToUpper": true, "strings.ToLower": true,
	"strings.Repeat": true, "strings.ReplaceAll": true,
}

var formatVerb = regexp.MustCompile(`%(?:\[\d+\])?[-+# 0-9.*]*[a-zA-Z%]`)

// hasWords says whether a string literal carries words (letters once the
// format verbs are taken out): "%s (%s)" and "—" have none.
func hasWords(s string) bool {
	for _, r := range formatVerb.ReplaceAllString(s, "") {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

func callName(e ast.Expr) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
	}
	return ""
}

// literalChecker finds untranslated literals in browser-facing arguments.
type literalChecker struct {
	fset     *token.FileSet
	topLevel map[string]ast.Expr // package-level const/var name → its value
	found    []string            // "file.go:line: sink: text"
}

// untranslated returns the literals with words that e passes on as they
// are: directly, concatenated, through a formatter, or through a constant
// or a local variable assigned a literal.
func (lc *literalChecker) untranslated(e ast.Expr, depth int) []*ast.BasicLit {
	if depth > 8 {
		return nil
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			if s, err := strconv.Unquote(x.Value); err == nil && hasWords(s) {
				return []*ast.BasicLit{x}
			}
		}
	case *ast.ParenExpr:
		return lc.untranslated(x.X, depth+1)
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			return append(lc.untranslated(x.X, depth+1), lc.untranslated(x.Y, depth+1)...)
		}
	case *ast.CallExpr:
		if formatters[callName(x.Fun)] {
			var out []*ast.BasicLit
			for _, a := range x.Args {
				out = append(out, lc.untranslated(a, depth+1)...)
			}
			return out
		}
	case *ast.Ident:
		if x.Obj != nil {
			switch d := x.Obj.Decl.(type) {
			case *ast.ValueSpec:
				for i, n := range d.Names {
					if n.Name == x.Name && i < len(d.Values) {
						return lc.untranslated(d.Values[i], depth+1)
					}
				}
			case *ast.AssignStmt:
				for i, l := range d.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name == x.Name && i < len(d.Rhs) && len(d.Lhs) == len(d.Rhs) {
						return lc.untranslated(d.Rhs[i], depth+1)
					}
				}
			}
			return nil
		}
		if v, ok := lc.topLevel[x.Name]; ok {
			return lc.untranslated(v, depth+1)
		}
	}
	return nil
}

func (lc *literalChecker) check(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := callName(call.Fun)
		for _, i := range sinks[name] {
			if i >= len(call.Args) {
				continue
			}
			for _, lit := range lc.untranslated(call.Args[i], 0) {
				pos := lc.fset.Position(call.Pos())
				s, _ := strconv.Unquote(lit.Value)
				lc.found = append(lc.found, fmt.Sprintf("%s:%d: %s: %s", pos.Filename, pos.Line, name, s))
			}
		}
		return true
	})
}

// checkSources parses the given files (name → source) as one package and
// returns the untranslated literals found.
func checkSources(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	lc := &literalChecker{fset: token.NewFileSet(), topLevel: map[string]ast.Expr{}}
	var parsed []*ast.File
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := parser.ParseFile(lc.fset, n, files[n], 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						lc.topLevel[id.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	for _, f := range parsed {
		lc.check(f)
	}
	return lc.found
}

// TestNoEnglishLiteralsInBrowserHelpers fails naming file:line when a
// handler (or the proxy, handlers/proxy) passes an English literal to a helper whose text a person reads
// in the browser, instead of trc(c, …) / i18n.T(ctx, …).
func TestNoEnglishLiteralsInBrowserHelpers(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	proxyPaths, err := filepath.Glob("proxy/*.go")
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, proxyPaths...)
	files := map[string][]byte{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = b
	}
	if len(files) < 50 {
		t.Fatalf("only %d files: the scan is broken", len(files))
	}
	used := map[string]bool{}
	for _, f := range checkSources(t, files) {
		file, rest, _ := strings.Cut(f, ":")
		_, rest, _ = strings.Cut(rest, ": ")  // line
		_, text, _ := strings.Cut(rest, ": ") // sink
		if _, ok := allowedLiterals[file+": "+text]; ok {
			used[file+": "+text] = true
			continue
		}
		t.Errorf("%s\n\tuntranslated English for the browser: wrap it in trc(c, …) or i18n.T(ctx, …) and add its zh-CN text", f)
	}
	for k := range allowedLiterals {
		if !used[k] {
			t.Errorf("allowedLiterals entry matches nothing any more: %q", k)
		}
	}
}

// The check finds what it must (it can fail) and lets translated text by.
func TestLiteralCheckerFinds(t *testing.T) {
	src := `package handlers

const english = "Saved as a constant."

func (h *Handler) x(c *gin.Context, name string) {
	h.flash(c, "Saved.")
	h.flashError(c, "Could not save "+name+".")
	h.flash(c, fmt.Sprintf("Moved %s.", name))
	msg := "Local words."
	h.flash(c, msg)
	h.flash(c, english)
	http.Error(w, "Gone.", 410)
	notebookPage(lc, w, 404, "Not found", i18n.T(lc, "There is no such workbench."), "")
	h.render(c, 200, templates.X(h.page(c, "Title")))
	h.flash(c, trc(c, "Saved %s.", name))
	h.flashError(c, i18n.T(ctx, "Could not save: %s", name))
	h.flash(c, fmt.Sprintf("%s (%s)", trc(c, "a"), name))
	h.flash(c, trcMsg(c, ve.Message))
	h.page(c, wb.Name)
}
`
	got := checkSources(t, map[string][]byte{"x.go": []byte(src)})
	want := []string{
		"x.go:6: h.flash: Saved.",
		"x.go:7: h.flashError: Could not save ",
		"x.go:8: h.flash: Moved %s.",
		"x.go:10: h.flash: Local words.",
		"x.go:11: h.flash: Saved as a constant.",
		"x.go:12: http.Error: Gone.",
		"x.go:13: notebookPage: Not found",
		"x.go:14: h.page: Title",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
