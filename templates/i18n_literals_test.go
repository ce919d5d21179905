package templates

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	parser "github.com/a-h/templ/parser/v2"
	"github.com/a-h/templ/parser/v2/visitor"
)

// pendingFiles are templates not yet converted to the message catalog
// (none: every page is).
var pendingFiles = map[string]bool{}

// allowedLiterals may stand alone as the whole text of a node or attribute:
// the brand, units and the names of the two languages (written in their own
// language on the switch, so they are never translated).
var allowedLiterals = map[string]bool{
	"Workbench": true, "GPU": true, "GPUs": true, "GiB": true, "MiB": true, "CPU": true,
	"h": true, "UTC": true, "English": true, "中文": true, "Jupyter": true, "JupyterLab": true,
	"SSH": true, "VS Code": true, "ID": true, "%": true,
	// Units and codes, the same in every language ("40 °C", "100 W").
	"C": true, "W": true, "kWh": true, "USD": true, "CNY": true,
	// Placeholders that show input in its technical form, not prose.
	"docker.io = registry.example.cn&#10;nvcr.io = nvcr.example.cn&#10;quay.io = quay.example.cn": true,
	"CUDA 12.4, PyTorch 2.5": true,
}

// userAttrs are attributes a person reads (or hears from a screen reader).
var userAttrs = map[string]bool{
	"title": true, "placeholder": true, "aria-label": true, "alt": true,
	"data-confirm": true, "data-confirm-delete-data": true, "aria-description": true,
	"data-label": true, // the column name a narrow screen shows beside a cell
}

// literal reports whether s is user-facing text that should have come from
// the catalog: it holds a letter and is not an allowed word.
func literal(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || allowedLiterals[s] || codeLike(s) {
		return false
	}
	// Format verbs are not words; a text whose every word is allowed
	// ("· Workbench", "%d × GPU") is not prose either.
	s = printfVerb.ReplaceAllString(s, " ")
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if !allowedLiterals[w] {
			return true
		}
	}
	return false
}

var printfVerb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z%]`)

// codeLike is a single token that is a path, placeholder or identifier
// ("/wb/{id}/", "{token}", "base_url"), shown as code, not prose.
func codeLike(s string) bool {
	return !strings.ContainsAny(s, " \t\n") && strings.ContainsAny(s, "{}/_=-.@")
}

var goStringLit = regexp.MustCompile(`^"(?:[^"\\]|\\.)*"$|^` + "`[^`]*`$")

var (
	// tCall is the key of a catalog call: i18n.T(ctx, "…" or .T("…".
	tCall = regexp.MustCompile(`(?:i18n\.T\(ctx,\s*|i18n\.Key\(|\.T\()"(?:[^"\\]|\\.)*"`)
	// anyLit is any Go string literal inside an expression.
	anyLit = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// literalExpr reports whether a templ expression prints user-facing text
// of its own: a bare Go string literal ({ "Stop" }, title={ "Stop" }), or
// words glued into it ({ n + " GPUs free" }). Keys of
// catalog calls are not such text.
func literalExpr(expr string) bool {
	expr = strings.TrimSpace(expr)
	if goStringLit.MatchString(expr) {
		s, err := strconv.Unquote(expr)
		return err == nil && literal(s)
	}
	for _, l := range anyLit.FindAllString(tCall.ReplaceAllString(expr, ""), -1) {
		s, err := strconv.Unquote(l)
		if err == nil && literal(s) {
			return true
		}
	}
	return false
}

func attrName(a parser.Attribute) string {
	switch a := a.(type) {
	case *parser.ConstantAttribute:
		if k, ok := a.Key.(parser.ConstantAttributeKey); ok {
			return strings.ToLower(k.Name)
		}
	case *parser.ExpressionAttribute:
		if k, ok := a.Key.(parser.ConstantAttributeKey); ok {
			return strings.ToLower(k.Name)
		}
	}
	return ""
}

func constAttr(attrs []parser.Attribute, name string) string {
	for _, a := range attrs {
		if c, ok := a.(*parser.ConstantAttribute); ok && attrName(c) == name {
			return c.Value
		}
	}
	return ""
}

// templateLiterals lists the user-facing literals of one templ file.
func templateLiterals(path string) ([]string, error) {
	tf, err := parser.Parse(path)
	if err != nil {
		return nil, err
	}
	var found []string
	add := func(r parser.Range, what, s string) {
		found = append(found, fmt.Sprintf("%s:%d: %s %q", filepath.Base(path), r.From.Line+1, what, strings.TrimSpace(s)))
	}
	v := visitor.New()
	inScript := 0
	v.Text = func(n *parser.Text) error {
		if inScript == 0 && literal(n.Value) {
			add(n.Range, "text", n.Value)
		}
		return nil
	}
	v.StringExpression = func(n *parser.StringExpression) error {
		if literalExpr(n.Expression.Value) {
			add(n.Expression.Range, "string", n.Expression.Value)
		}
		return nil
	}
	checkAttrs := func(el string, attrs []parser.Attribute) {
		var visit func(attrs []parser.Attribute)
		visit = func(attrs []parser.Attribute) {
			for _, a := range attrs {
				name := attrName(a)
				user := userAttrs[name] || strings.HasPrefix(name, "data-label-") // words a script shows
				if name == "value" && el == "input" {
					switch strings.ToLower(constAttr(attrs, "type")) {
					case "submit", "button", "reset":
						user = true
					}
				}
				switch a := a.(type) {
				case *parser.ConstantAttribute:
					if user && literal(a.Value) {
						add(a.Range, name+"=", a.Value)
					}
				case *parser.ExpressionAttribute:
					if user && literalExpr(a.Expression.Value) {
						add(a.Range, name+"=", a.Expression.Value)
					}
				case *parser.ConditionalAttribute:
					visit(a.Then)
					visit(a.Else)
				}
			}
		}
		visit(attrs)
	}
	elem := v.Element
	v.Element = func(n *parser.Element) error {
		checkAttrs(strings.ToLower(n.Name), n.Attributes)
		// Scripts and styles are code, not text; so are commands and
		// paths shown in <code> or <pre> (typed as they are, in any
		// language).
		switch strings.ToLower(n.Name) {
		case "style", "script", "code", "pre", "kbd", "samp":
			inScript++
			defer func() { inScript-- }()
		}
		return elem(n)
	}
	if err := tf.Visit(v); err != nil {
		return nil, err
	}
	return found, nil
}

// TestNoUntranslatedLiterals fails on any user-facing English (or other)
// text written into a template instead of going through i18n.T: every word a
// person reads must be in the message catalog, or the Chinese pages would
// show it in English.
func TestNoUntranslatedLiterals(t *testing.T) {
	files, err := filepath.Glob("*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates: %v", err)
	}
	sort.Strings(files)
	checked := 0
	for _, f := range files {
		if pendingFiles[f] {
			continue
		}
		checked++
		lits, err := templateLiterals(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, l := range lits {
			t.Error("untranslated:", l)
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d templates", checked)
	}
	for f := range pendingFiles {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("pendingFiles names %s, which does not exist", f)
		}
	}
}

// The check itself: it must see text, attributes and bare string
// expressions, and leave alone what is translated or allowed.
func TestLiteralCheckerFindsLiterals(t *testing.T) {
	dir := t.TempDir()
	src := `package templates

templ X(n string) {
	<h1>Hello there</h1>
	<p>{ i18n.T(ctx, "Fine %s", n) }</p>
	<span title="Stop it">{ "Bare words" }</span>
	<p>{ n + " glued on" }</p>
	<p>{ fmt.Sprintf("%s", n) }</p>
	<input type="submit" value="Save"/>
	<input type="hidden" name="next" value="keep"/>
	<img alt="A logo" src="x"/>
	<p>Workbench</p>
	<p>· 3 ×</p>
	<form data-confirm="Really?"></form>
	<script>var x = "code";</script>
	<code>ssh -p 22 host</code>
}
`
	p := filepath.Join(dir, "x.templ")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := templateLiterals(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`"Hello there"`, `title= "Stop it"`, "Bare words", `glued on`, `value= "Save"`, `alt= "A logo"`, `data-confirm= "Really?"`}
	joined := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("checker missed %s in:\n%s", w, joined)
		}
	}
	if len(got) != len(want) {
		t.Errorf("checker found %d literals, want %d:\n%s", len(got), len(want), joined)
	}
}
