package i18n

import (
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
// i18n.T(ctx, "…"), i18n.T(c.Request.Context(), "…"), i18n.Key("…") and a
// Locale's .T("…").
var keyCall = regexp.MustCompile(`(?:\bi18n\.T\(\s*[A-Za-z_][A-Za-z0-9_.]*(?:\(\))?\s*,\s*|\bi18n\.Key\(\s*|\.T\(\s*)("(?:[^"\\\n]|\\.)*")`)

// usedKeys scans the module's Go and templ source (not generated templ
// code, not tests other than this package's own) for literal catalog keys.
func usedKeys(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	used := map[string][]string{}
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}

// TestCatalogComplete fails when a key the code uses has no zh-CN
// translation (the Chinese page would show English), when a zh-CN entry is
// used nowhere (a renamed key leaves its translation behind), and when a
// translation drops or adds a format verb.
func TestCatalogComplete(t *testing.T) {
	used := usedKeys(t)
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
			if _, ok := used[k]; !ok {
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

var verb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z]`)

// sampleArgs fills a key's verbs, so that a translation that drops one
// shows %!(EXTRA …) and one that adds one shows %!v(MISSING). (%% is
// no verb.)
func sampleArgs(key string) []any {
	var args []any
	for _, v := range verb.FindAllString(strings.ReplaceAll(key, "%%", ""), -1) {
		switch v[len(v)-1] {
		case 'd':
			args = append(args, 2)
		case 'g', 'f':
			args = append(args, 2.5)
		default:
			args = append(args, "x")
		}
	}
	return args
}
