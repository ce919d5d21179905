// Package i18n translates the portal's user-facing text into the reader's
// language (English and Simplified Chinese).
//
// Messages are keyed by their English text, a printf format, as
// golang.org/x/text/message does: a template writes
//
//	{ i18n.T(ctx, "%d GPUs free", n) }
//
// and still reads as English; the catalog maps that key to its zh-CN text.
// A key missing from a catalog prints as the English text itself, so a new
// string is never blank — and a test (catalog completeness) fails until it
// has its translation.
//
// Catalog files live in locales/<tag>/<area>.json, one file per area of the
// portal so that people changing different pages never edit the same file.
// A value is either the translation or, for counts, plural cases selected by
// the first argument:
//
//	"%d GPUs free": "%d 块 GPU 空闲"
//	"%d GPUs free": {"one": "%d GPU free", "other": "%d GPUs free"}   (locales/en)
//
// Numbers printed with %d are formatted for the locale (thousands
// separators), so identifiers — ports, ids, years — must be passed as
// strings (%s), never %d.
package i18n

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// The languages the portal speaks, in the order the language switch lists
// them. The first is the fallback.
var (
	English = language.English
	Chinese = language.MustParse("zh-CN")

	Supported = []language.Tag{English, Chinese}
)

//go:embed locales
var localeFS embed.FS

// Locale prints messages for one language.
type Locale struct {
	Tag     language.Tag
	printer *message.Printer
}

var (
	cat      *catalog.Builder
	keys     map[language.Tag][]string
	locales  map[language.Tag]Locale
	matcher  = language.NewMatcher(Supported)
	loadErrs error
)

func init() {
	cat, keys, loadErrs = load(localeFS)
	if loadErrs != nil {
		// The catalog is embedded at build time; a broken file is a
		// programming error that the package's tests report first.
		panic(loadErrs)
	}
	locales = make(map[language.Tag]Locale, len(Supported))
	for _, t := range Supported {
		locales[t] = Locale{Tag: t, printer: message.NewPrinter(t, message.Catalog(cat))}
	}
}

// load reads every locales/<tag>/*.json file into one catalog. The same key
// in two files of one language must carry the same text: two pages may share
// a word, but not disagree on it.
func load(fsys fs.FS) (*catalog.Builder, map[language.Tag][]string, error) {
	b := catalog.NewBuilder(catalog.Fallback(English))
	seen := map[language.Tag]map[string]string{}
	dirs, err := fs.ReadDir(fsys, "locales")
	if err != nil {
		return nil, nil, err
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		tag, err := language.Parse(d.Name())
		if err != nil {
			return nil, nil, fmt.Errorf("i18n: locale directory %q: %w", d.Name(), err)
		}
		files, err := fs.Glob(fsys, path.Join("locales", d.Name(), "*.json"))
		if err != nil {
			return nil, nil, err
		}
		sort.Strings(files)
		if seen[tag] == nil {
			seen[tag] = map[string]string{}
		}
		for _, f := range files {
			raw, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, nil, err
			}
			var entries map[string]json.RawMessage
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, nil, fmt.Errorf("i18n: %s: %w", f, err)
			}
			for key, val := range entries {
				canon := string(val)
				if prev, dup := seen[tag][key]; dup && prev != canon {
					return nil, nil, fmt.Errorf("i18n: %s: %q is translated differently in another %s file", f, key, d.Name())
				}
				seen[tag][key] = canon
				if err := set(b, tag, key, val); err != nil {
					return nil, nil, fmt.Errorf("i18n: %s: %q: %w", f, key, err)
				}
			}
		}
	}
	ks := map[language.Tag][]string{}
	for tag, m := range seen {
		for k := range m {
			ks[tag] = append(ks[tag], k)
		}
		sort.Strings(ks[tag])
	}
	return b, ks, nil
}

// set adds one entry: a plain translation, or plural cases selected by the
// first argument ("zero", "one", "two", "few", "many", "other", or "=N").
func set(b *catalog.Builder, tag language.Tag, key string, val json.RawMessage) error {
	var s string
	if err := json.Unmarshal(val, &s); err == nil {
		return b.SetString(tag, key, s)
	}
	var cases map[string]string
	if err := json.Unmarshal(val, &cases); err != nil {
		return fmt.Errorf("want a string or an object of plural cases")
	}
	if _, ok := cases["other"]; !ok {
		return fmt.Errorf("plural cases need an \"other\" case")
	}
	order := make([]string, 0, len(cases))
	for k := range cases {
		order = append(order, k)
	}
	// "=N" cases before the CLDR categories, "other" last: the first match wins.
	sort.Slice(order, func(i, j int) bool {
		return caseRank(order[i]) < caseRank(order[j]) || caseRank(order[i]) == caseRank(order[j]) && order[i] < order[j]
	})
	args := make([]any, 0, 2*len(order))
	for _, k := range order {
		args = append(args, k, cases[k])
	}
	return b.Set(tag, key, plural.Selectf(1, "%d", args...))
}

func caseRank(c string) int {
	switch {
	case strings.HasPrefix(c, "="):
		return 0
	case c == "other":
		return 2
	}
	return 1
}

// Keys lists the catalog keys a language has, sorted (for the completeness
// test).
func Keys(tag language.Tag) []string { return keys[tag] }

// Get returns the locale for a supported tag; anything else is English.
func Get(tag language.Tag) Locale {
	if l, ok := locales[tag]; ok {
		return l
	}
	return locales[English]
}

// T prints key in this locale, with args.
func (l Locale) T(key string, args ...any) string {
	if l.printer == nil {
		l = locales[English]
	}
	return l.printer.Sprintf(key, args...)
}

// Lang is the BCP 47 tag for <html lang> and the Content-Language header.
func (l Locale) Lang() string {
	if l.printer == nil {
		return English.String()
	}
	return l.Tag.String()
}

type ctxKey struct{}

// WithLocale returns a context whose pages print in tag.
func WithLocale(ctx context.Context, tag language.Tag) context.Context {
	return context.WithValue(ctx, ctxKey{}, Get(tag))
}

// FromContext returns the locale a request chose; English if none.
func FromContext(ctx context.Context) Locale {
	if ctx != nil {
		if l, ok := ctx.Value(ctxKey{}).(Locale); ok {
			return l
		}
	}
	return locales[English]
}

// T prints key in the context's locale. It is what templates and view
// models call.
func T(ctx context.Context, key string, args ...any) string {
	return FromContext(ctx).T(key, args...)
}

// Negotiate picks the language for a request: the user's saved preference
// (or a language cookie) if it names a supported language, else the best
// match for the Accept-Language header, else English.
func Negotiate(preference, acceptLanguage string) language.Tag {
	if preference != "" {
		if t, err := language.Parse(preference); err == nil {
			if _, idx, conf := matcher.Match(t); conf >= language.High {
				return Supported[idx]
			}
		}
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return English
	}
	_, idx, conf := matcher.Match(tags...)
	if conf == language.No {
		return English
	}
	return Supported[idx]
}
