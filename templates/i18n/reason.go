package i18n

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Reasons: the texts the layers below the handlers write for people — an
// orchestrator refusal ("quota exceeded: at most 2 GPUs at once (you hold
// 2, this asks 1)"), a stop reason stored with the workbench ("stopped
// after 1h0m0s without activity (idle timeout)"), a queue reason — are
// written once, in English with their values put in, for the logs, the
// database and the JSON API. Their printf formats are the keys of the
// catalog area "reasons" (locales/zh-CN/reasons.json; the orchestrator
// builds them with models.Reasonf, and a handlers test fails when one of
// its formats is not there). A page shows such a text through Reason,
// which recognises the format, takes the values back out and prints the
// format in the reader's language.

// reasonsFile is the catalog file whose keys are the formats Reason
// recognises.
const reasonsFile = "locales/zh-CN/reasons.json"

// reasonPattern recognises one format's English text.
type reasonPattern struct {
	key    string
	prefix string // the literal text before the first verb
	re     *regexp.Regexp
	verbs  []byte // each capture's verb letter
	weight int    // literal characters: the most specific format wins
}

var (
	reasonOnce     sync.Once
	reasonPatterns []reasonPattern
	reasonExact    map[string]bool
	zhKeys         map[string]bool
)

// reasonVerb finds a printf verb (explicit argument indexes are not
// supported in reasons).
var reasonVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

func loadReasons() {
	reasonExact = map[string]bool{}
	zhKeys = map[string]bool{}
	for _, k := range keys[Chinese] {
		zhKeys[k] = true
	}
	raw, err := localeFS.ReadFile(reasonsFile)
	if err != nil {
		return // no reasons area: Reason shows texts as they are
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return // load() already refused a broken file
	}
	for k := range entries {
		if p, ok := compileReason(k); ok {
			reasonPatterns = append(reasonPatterns, p)
		} else {
			reasonExact[k] = true
		}
	}
	sort.Slice(reasonPatterns, func(i, j int) bool {
		a, b := reasonPatterns[i], reasonPatterns[j]
		return a.weight > b.weight || a.weight == b.weight && a.key < b.key
	})
}

// compileReason builds the pattern of a format with verbs; ok is false for
// a plain text (no verbs).
func compileReason(key string) (reasonPattern, bool) {
	p := reasonPattern{key: key}
	var re strings.Builder
	re.WriteString(`^(?s)`)
	last := 0
	for _, loc := range reasonVerb.FindAllStringIndex(key, -1) {
		lit := key[last:loc[0]]
		verb := key[loc[0]:loc[1]]
		last = loc[1]
		if verb == "%%" {
			lit += "%"
			verb = ""
		}
		re.WriteString(regexp.QuoteMeta(lit))
		p.weight += len(lit)
		if len(p.verbs) == 0 {
			p.prefix += lit
		}
		if verb == "" {
			continue
		}
		c := verb[len(verb)-1]
		switch c {
		case 'd':
			re.WriteString(`(-?\d+)`)
		case 'f', 'g', 'e':
			re.WriteString(`(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)`)
		case 'q':
			re.WriteString(`("(?:[^"\\]|\\.)*")`)
		default:
			re.WriteString(`(.*?)`)
		}
		p.verbs = append(p.verbs, c)
	}
	if len(p.verbs) == 0 {
		return p, false
	}
	tail := key[last:]
	re.WriteString(regexp.QuoteMeta(tail))
	p.weight += len(tail)
	p.re = regexp.MustCompile(re.String() + `$`)
	return p, true
}

// Reason prints text — English written by a layer below the handlers, see
// above — in ctx's language: the catalog's text of its format with the
// values it carries (values that are themselves reasons translated too),
// or, where no format of the reasons area words it, the catalog's text of
// the whole text, else the text as it is. An English reader gets it as it
// is, but for the colons of a reason inside it (a clause, see reasonArgs).
func Reason(ctx context.Context, text string) string {
	l := FromContext(ctx)
	if text == "" {
		return text
	}
	if l.Tag == English {
		// As it is, unless a reason inside it brings a colon of its own
		// ("stopped: quota exceeded: the monthly budget is used up (your
		// files are kept)"): the inner one reads as a clause, "stopped:
		// quota exceeded — the monthly budget is used up (…)".
		if strings.Count(text, ": ") < 2 {
			return text
		}
		reasonOnce.Do(loadReasons)
		if out, ok := l.reason(text, 0, false); ok {
			return out
		}
		return text
	}
	reasonOnce.Do(loadReasons)
	if out, ok := l.reason(text, 0, false); ok {
		return out
	}
	// A reason made a sentence (capitalised, with a full stop: an image
	// pull's failure) is recognised without them.
	if s, ok := unsentence(text); ok {
		if out, ok := l.reason(s, 0, false); ok {
			return out + "。"
		}
	}
	if zhKeys[text] && !strings.Contains(text, "%") {
		return l.T(text)
	}
	return text
}

// ReasonClause is Reason worded to follow a page's own words and a colon
// ("Could not start: %s."), in English too: one sentence with one colon,
// the page's. The reason's own colons — the colons of its format, and of
// the formats of reasons inside it ("quota exceeded: the monthly budget is
// used up") — read as dashes ("quota exceeded — the monthly budget is used
// up"; "超出配额——本月预算已用完"), and a full stop at its end is dropped,
// the page's sentence ends it. Values put in (a name, an engine's message)
// stay as written; a text no format words is left as it is.
func ReasonClause(ctx context.Context, text string) string {
	l := FromContext(ctx)
	if text == "" {
		return text
	}
	reasonOnce.Do(loadReasons)
	out, ok := l.reason(text, 0, true)
	if s, sentence := unsentence(text); !ok && sentence {
		out, ok = l.reason(s, 0, true)
	}
	if !ok && l.Tag != English && zhKeys[text] && !strings.Contains(text, "%") {
		out, ok = l.dashes(l.T(text)), true
	}
	if !ok {
		out = text
	}
	// Matched with its full stop (a format may end with one), dropped
	// after.
	return strings.TrimRight(out, ".。")
}

// unsentence undoes the orchestrator's sentence(): "The image x does not
// exist." → "the image x does not exist"; a sentence that starts with a
// name ("ghcr.io refused …") only loses its full stop.
func unsentence(s string) (string, bool) {
	if len(s) < 2 || !strings.HasSuffix(s, ".") {
		return "", false
	}
	s = strings.TrimSuffix(s, ".")
	if 'A' <= s[0] && s[0] <= 'Z' {
		s = strings.ToLower(s[:1]) + s[1:]
	}
	return s, true
}

// ReasonKeys lists the formats Reason recognises (the keys of the reasons
// area), for tests.
func ReasonKeys() map[string]bool {
	reasonOnce.Do(loadReasons)
	out := make(map[string]bool, len(reasonPatterns)+len(reasonExact))
	for _, p := range reasonPatterns {
		out[p.key] = true
	}
	for k := range reasonExact {
		out[k] = true
	}
	return out
}

// reason translates text when a key of the reasons area words it. Two
// formats may both word a text ("%s needed; %d free (%d reserved for
// someone else now); %s" and a queue reason built in steps): the most
// specific one whose values of several words are all reasons themselves
// wins, else the most specific one that matches. clause words it as
// ReasonClause does (an English locale prints it only then).
func (l Locale) reason(text string, depth int, clause bool) (string, bool) {
	if reasonExact[text] {
		switch {
		case !clause:
			return l.T(text), true
		case l.Tag == English:
			return l.dashes(text), true
		}
		return l.dashes(l.T(text)), true
	}
	if depth > 6 {
		return "", false
	}
	first, found := "", false
	for _, p := range reasonPatterns {
		if !strings.HasPrefix(text, p.prefix) {
			continue
		}
		m := p.re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		args, whole, ok := l.reasonArgs(p.verbs, m[1:], depth, clause)
		if !ok {
			continue
		}
		var out string
		switch {
		case clause:
			out = l.clause(p.key, args)
		case l.Tag == English:
			out = fmt.Sprintf(p.key, args...) // as the models wrote it (no grouping of numbers)
		default:
			out = l.T(p.key, args...)
		}
		if whole {
			return out, true
		}
		if !found {
			first, found = out, true
		}
	}
	return first, found
}

// reasonArgs turns the captured values back into the arguments their verbs
// print; a string that is itself a reason is translated, and an amount of
// money is written in the reader's style (Amount: "8.94 USD" → "$8.94").
// whole says that every value of several words was a reason or an amount.
func (l Locale) reasonArgs(verbs []byte, vals []string, depth int, clause bool) (args []any, whole, ok bool) {
	args = make([]any, len(vals))
	whole = true
	for i, v := range vals {
		switch verbs[i] {
		case 'd':
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, false, false
			}
			args[i] = n
		case 'f', 'g', 'e':
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, false, false
			}
			args[i] = f
		case 'q':
			s, err := strconv.Unquote(v)
			if err != nil {
				return nil, false, false
			}
			args[i] = s
		default:
			if m, ok := l.money(v); ok {
				args[i] = m
			} else if t, ok := l.reason(v, depth+1, true); ok {
				// A reason inside a reason reads as a clause: its colons
				// as dashes, so the sentence keeps one colon
				// ("stopped: quota exceeded — the monthly budget is used
				// up (your files are kept)").
				args[i] = t
			} else {
				args[i] = v
				whole = whole && !strings.Contains(v, " ")
			}
		}
	}
	return args, whole, true
}

// slotted stands for a value in a format printed by clause: it prints a
// mark the colons of the format cannot be confused with, and keeps what the
// value prints as, to be put back after.
type slotted struct {
	v     any
	table *[]string
}

func (s slotted) Format(f fmt.State, verb rune) {
	*s.table = append(*s.table, fmt.Sprintf(fmt.FormatString(f, verb), s.v))
	fmt.Fprintf(f, "\uE000%d\uE001", len(*s.table)-1)
}

var slotMark = regexp.MustCompile("\uE000(\\d+)\uE001")

// clause prints format key with args as ReasonClause words it: the colons
// of the format read as dashes, the values (numbers aside, which hold no
// colon) as they print. English prints the format as the models did
// (fmt, without the catalog's grouping of numbers), so only its colons
// change.
func (l Locale) clause(key string, args []any) string {
	var table []string
	in := make([]any, len(args))
	for i, a := range args {
		switch a.(type) {
		case string, error, fmt.Stringer:
			in[i] = slotted{v: a, table: &table}
		default:
			in[i] = a // a number: no colon in it, and a plural's selector
		}
	}
	var out string
	if l.Tag == English {
		out = fmt.Sprintf(key, in...)
	} else {
		out = l.T(key, in...)
	}
	return slotMark.ReplaceAllStringFunc(l.dashes(out), func(m string) string {
		n, err := strconv.Atoi(slotMark.FindStringSubmatch(m)[1])
		if err != nil || n >= len(table) {
			return m
		}
		return table[n]
	})
}

// separatorColon is a colon an English sentence continues after ("quota
// exceeded: the …"), not one written as a character (" : ", "14:05"); a
// digest's "sha256: " names the algorithm, it separates nothing.
var separatorColon = regexp.MustCompile(`\S: `)

// dashes writes the separating colons of a text of the portal's as dashes:
// " — " in English, "——" in Chinese (its full-width colon; a Chinese text
// writes a colon as a character in ASCII).
func (l Locale) dashes(s string) string {
	if l.Tag != English && l.printer != nil {
		return strings.ReplaceAll(s, "：", "——")
	}
	var b strings.Builder
	last := 0
	for _, m := range separatorColon.FindAllStringIndex(s, -1) {
		colon := m[1] - 2
		if strings.HasSuffix(s[:colon], "sha256") {
			continue
		}
		b.WriteString(s[last:colon] + " — ")
		last = m[1]
	}
	return b.String() + s[last:]
}

// TClause prints key with args as T does, worded as ReasonClause words a
// reason: to follow a page's own words and colon, its own colons as dashes
// and without a full stop at its end; the values as they print. For the
// messages a page translates by its own patterns (a form value's message
// after "Could not change the ports:").
func TClause(ctx context.Context, key string, args ...any) string {
	return strings.TrimRight(FromContext(ctx).clause(key, args), ".。")
}
