package i18n

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// keyCall finds the literal key of a catalog call in Go or templ source:
// i18n.T(ctx, "…"), i18n.T(c.Request.Context(), "…"), i18n.Key("…"), a
// Locale's .T("…") and the admin pages' wrappers trc(c, "…") and
// tMarkup(ctx, "…").
var keyCall = regexp.MustCompile(`(?:\b(?:i18n\.T|trc|tMarkup)\(\s*[A-Za-z_][A-Za-z0-9_.]*(?:\(\))?\s*,\s*|\bi18n\.Key\(\s*|\.T\(\s*)("(?:[^"\\\n]|\\.)*")`)

// usedKeys scans the module's Go and templ source (not generated templ
// code, not tests other than this package's own) for literal catalog keys.
//
// It also returns every string literal of the Go source: a catalog entry
// translates some of them away from any call — validation messages that
// models word in English and handlers translate when a page shows them, and
// tables of messages (checkMessages) — so an entry is stale only when its
// English text is in neither set.
func usedKeys(t *testing.T) (used map[string][]string, literals map[string]bool) {
	t.Helper()
	root := filepath.Join("..", "..")
	used = map[string][]string{}
	literals = map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "static", "data", "shared":
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		switch {
		case strings.HasSuffix(name, "_templ.go"):
			return nil
		case strings.HasSuffix(name, "_test.go") && filepath.Dir(p) != ".":
			return nil
		case strings.HasSuffix(name, ".go"), strings.HasSuffix(name, ".templ"):
		default:
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range keyCall.FindAllStringSubmatch(string(src), -1) {
			k, err := strconv.Unquote(m[1])
			if err != nil {
				t.Errorf("%s: key %s: %v", p, m[1], err)
				continue
			}
			used[k] = append(used[k], p)
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			var sc scanner.Scanner
			sc.Init(token.NewFileSet().AddFile(p, -1, len(src)), src, nil, 0)
			for {
				_, tok, lit := sc.Scan()
				if tok == token.EOF {
					break
				}
				if tok == token.STRING {
					if s, err := strconv.Unquote(lit); err == nil {
						literals[s] = true
						// A text with a percent sign is a key with it doubled.
						literals[strings.ReplaceAll(s, "%", "%%")] = true
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return used, literals
}

// TestCatalogComplete fails when a key the code uses has no zh-CN
// translation (the Chinese page would show English), when a zh-CN entry is
// used nowhere (a renamed key leaves its translation behind), and when a
// translation drops or adds a format verb.
func TestCatalogComplete(t *testing.T) {
	used, literals := usedKeys(t)
	if len(used) < 200 {
		t.Fatalf("found only %d keys in the source: the scan is broken", len(used))
	}
	zh := map[string]bool{}
	for _, k := range Keys(Chinese) {
		zh[k] = true
	}
	var missing []string
	for k, where := range used {
		if !zh[k] {
			missing = append(missing, strconv.Quote(k)+" ("+where[0]+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("no zh-CN translation: %s", m)
	}
	for _, tag := range Supported {
		for _, k := range Keys(tag) {
			if _, ok := used[k]; !ok && !literals[k] {
				t.Errorf("%s entry used nowhere: %q", tag, k)
			}
		}
	}
	zhLocale := Get(Chinese)
	for k := range used {
		if !zh[k] {
			continue
		}
		if out := zhLocale.T(k, sampleArgs(k)...); strings.Contains(out, "%!") {
			t.Errorf("zh-CN %q does not take the key's arguments: %s", k, out)
		}
	}
}

var verb = regexp.MustCompile(`%(?:\[(\d+)\])?[-+# 0-9.*]*[a-zA-Z]`)

// sampleArgs fills a key's verbs, so that a translation that drops one
// shows %!(EXTRA …) and one that adds one shows %!v(MISSING). (%% is
// no verb.) Explicit indexes (%[2]s) name the argument they print.
func sampleArgs(key string) []any {
	var args []any
	next := 0
	for _, m := range verb.FindAllStringSubmatch(strings.ReplaceAll(key, "%%", ""), -1) {
		i := next
		if m[1] != "" {
			n, _ := strconv.Atoi(m[1])
			i = n - 1
		}
		next = i + 1
		for len(args) <= i {
			args = append(args, nil)
		}
		switch v := m[0]; v[len(v)-1] {
		case 'd':
			args[i] = 2
		case 'g', 'f':
			args[i] = 2.5
		default:
			args[i] = "x"
		}
	}
	return args
}
