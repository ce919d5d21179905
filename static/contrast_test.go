package static

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// wcagAA is the contrast WCAG 2.x level AA asks of normal text.
const wcagAA = 4.5

// basePairs are the text/background pairs every page is made of: body
// text, muted text and links on each background, primary buttons, and the
// status colours used as text.
var basePairs = [][2]string{
	{"--text", "--bg"}, {"--text", "--surface"}, {"--text", "--surface-2"},
	{"--muted", "--bg"}, {"--muted", "--surface"}, {"--muted", "--surface-2"},
	{"--accent", "--bg"}, {"--accent", "--surface"}, {"--accent", "--surface-2"},
	{"--accent-text", "--accent"},
	{"--ok", "--surface"}, {"--warn", "--surface"}, {"--bad", "--surface"}, {"--bad", "--bg"}, {"--bad", "--surface-2"},
}

// TestContrastAA checks WCAG AA contrast in the light and the dark theme:
// the base pairs above, and every rule of app.css that sets a background
// (a colour or a color-mix of colours) with the text colour it sets, or
// the body text colour it inherits.
func TestContrastAA(t *testing.T) {
	css, err := FS.ReadFile("css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	themes, rules := parseCSS(t, string(css))
	checked := 0
	for name, vars := range themes {
		for _, p := range basePairs {
			fg, bg := mustColor(t, vars, "var("+p[0]+")"), mustColor(t, vars, "var("+p[1]+")")
			if r := contrast(fg, bg); r < wcagAA {
				t.Errorf("%s theme: %s on %s has contrast %.2f, below %.1f", name, p[0], p[1], r, wcagAA)
			}
			checked++
		}
		for _, r := range rules {
			bg, ok := color(vars, r.background)
			if !ok {
				continue
			}
			fgExpr := r.color
			if fgExpr == "" {
				fgExpr = "var(--text)"
			}
			fg, ok := color(vars, fgExpr)
			if !ok {
				continue
			}
			if c := contrast(fg, bg); c < wcagAA {
				t.Errorf("%s theme: %q: text %s on background %s has contrast %.2f, below %.1f", name, r.selector, fgExpr, r.background, c, wcagAA)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Fatalf("only %d pairs checked: the CSS parser found too little", checked)
	}
	t.Logf("%d colour pairs checked", checked)
}

func TestContrastFormula(t *testing.T) {
	black, white := rgb{0, 0, 0}, rgb{255, 255, 255}
	if c := contrast(black, white); math.Abs(c-21) > 0.01 {
		t.Fatalf("black on white %.2f, want 21", c)
	}
	// #767676 on white is the well-known 4.54:1 AA boundary.
	if c := contrast(rgb{0x76, 0x76, 0x76}, white); math.Abs(c-4.54) > 0.01 {
		t.Fatalf("#767676 on white %.2f, want 4.54", c)
	}
}

type rgb [3]float64

// cssRule is one rule's colours.
type cssRule struct{ selector, color, background string }

var (
	blockRe   = regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`)
	varDefRe  = regexp.MustCompile(`(--[a-z0-9-]+)\s*:\s*(#[0-9a-fA-F]{3,6})\b`)
	declRe    = regexp.MustCompile(`(?:^|;)\s*(color|background(?:-color)?)\s*:\s*([^;]+)`)
	mixRe     = regexp.MustCompile(`^color-mix\(in srgb,\s*(var\(--[a-z0-9-]+\)|#[0-9a-fA-F]{3,6})\s+([0-9.]+)%,\s*(var\(--[a-z0-9-]+\)|#[0-9a-fA-F]{3,6})\)$`)
	commentRe = regexp.MustCompile(`(?s)/\*.*?\*/`)
)

// parseCSS reads the light theme's custom properties (:root), the dark
// theme's overrides (:root inside prefers-color-scheme: dark) and every
// other rule's color and background.
func parseCSS(t *testing.T, css string) (map[string]map[string]string, []cssRule) {
	css = commentRe.ReplaceAllString(css, "")
	light, dark := map[string]string{}, map[string]string{}
	darkAt := strings.Index(css, "prefers-color-scheme: dark")
	var rules []cssRule
	for _, m := range blockRe.FindAllStringSubmatchIndex(css, -1) {
		sel := strings.TrimSpace(css[m[2]:m[3]])
		body := css[m[4]:m[5]]
		if strings.HasSuffix(sel, ":root") {
			into := light
			if darkAt >= 0 && m[0] > darkAt {
				into = dark
			}
			for _, d := range varDefRe.FindAllStringSubmatch(body, -1) {
				into[d[1]] = d[2]
			}
			continue
		}
		if strings.Contains(body, `content: ""`) {
			continue // a decorative shape (no text on it)
		}
		r := cssRule{selector: sel}
		for _, d := range declRe.FindAllStringSubmatch(body, -1) {
			v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(d[2]), "!important"))
			if d[1] == "color" {
				r.color = v
			} else {
				r.background = v
			}
		}
		if r.background != "" {
			rules = append(rules, r)
		}
	}
	if len(light) < 8 || len(dark) < 8 {
		t.Fatalf("found %d light and %d dark custom properties", len(light), len(dark))
	}
	darkAll := map[string]string{}
	for k, v := range light {
		darkAll[k] = v
	}
	for k, v := range dark {
		darkAll[k] = v
	}
	return map[string]map[string]string{"light": light, "dark": darkAll}, rules
}

func mustColor(t *testing.T, vars map[string]string, expr string) rgb {
	t.Helper()
	c, ok := color(vars, expr)
	if !ok {
		t.Fatalf("cannot resolve %s", expr)
	}
	return c
}

// color resolves a colour expression: #hex, var(--x), color-mix(in srgb, A p%, B) (mixed channel by channel in sRGB, as the
// CSS spec defines it). Anything else (transparent, gradients, inherit) is
// not checked.
func color(vars map[string]string, expr string) (rgb, bool) {
	expr = strings.TrimSpace(expr)
	switch {
	case strings.HasPrefix(expr, "#"):
		return hex(expr)
	case strings.HasPrefix(expr, "var("):
		name := strings.TrimSuffix(strings.TrimPrefix(expr, "var("), ")")
		v, ok := vars[name]
		if !ok {
			return rgb{}, false
		}
		return hex(v)
	}
	m := mixRe.FindStringSubmatch(expr)
	if m == nil {
		return rgb{}, false
	}
	a, okA := color(vars, m[1])
	b, okB := color(vars, m[3])
	p, err := strconv.ParseFloat(m[2], 64)
	if !okA || !okB || err != nil {
		return rgb{}, false
	}
	p /= 100
	return rgb{a[0]*p + b[0]*(1-p), a[1]*p + b[1]*(1-p), a[2]*p + b[2]*(1-p)}, true
}

func hex(s string) (rgb, bool) {
	s = strings.TrimPrefix(s, "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	if len(s) != 6 {
		return rgb{}, false
	}
	var c rgb
	for i := 0; i < 3; i++ {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return rgb{}, false
		}
		c[i] = float64(v)
	}
	return c, true
}

// luminance is WCAG 2's relative luminance.
func luminance(c rgb) float64 {
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c[0]) + 0.7152*lin(c[1]) + 0.0722*lin(c[2])
}

func contrast(a, b rgb) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
