package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
)

// A person clicks 中文 in the header and the portal speaks Chinese, and
// still does after a reload. With JavaScript on, the admin switches after
// signing in (the choice is saved to the account); with it off, a visitor
// switches on the login page (the cookie) and then signs in. A screenshot
// of the Chinese page shows the heading's characters drawn, with a CJK
// font (fonts-noto-cjk, installed by .ci/run).
func TestBrowserLanguageSwitch(t *testing.T) {
	for _, scripts := range []string{"on", "off"} {
		t.Run("javascript-"+scripts, func(t *testing.T) {
			ts := btStartPortal(t)
			ctx := btNewBrowser(t)
			if scripts == "off" {
				btDo(t, ctx, "disable JavaScript", btScriptsOff())
				btNavigate(t, ctx, ts.URL+"/login")
				if got := btText(t, ctx, "h1"); got != "Log in" {
					t.Fatalf("login heading %q before the switch", got)
				}
				btSubmit(t, ctx, "click 中文 on the login page", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
				if p := btLocation(t, ctx).Path; p != "/login" {
					t.Fatalf("the switch went to %s, want back to /login", p)
				}
				if got := btText(t, ctx, "h1"); got != "登录" {
					t.Fatalf("login heading %q after the switch, want 登录", got)
				}
				if resp := btLogin(t, ctx, "admin", btAdminPassword); resp.Status != 200 {
					t.Fatalf("login: status %d", resp.Status)
				}
			} else {
				btLoginAsAdmin(t, ctx, ts.URL)
				if got := btText(t, ctx, "h1"); got != "Workbenches" {
					t.Fatalf("home heading %q before the switch", got)
				}
				btSubmit(t, ctx, "click 中文 in the header", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
			}
			checkChinese := func(when string) {
				t.Helper()
				if p := btLocation(t, ctx).Path; p != "/" {
					t.Fatalf("%s: at %s, want /", when, p)
				}
				if got := btText(t, ctx, "h1"); got != "工作台" {
					t.Errorf("%s: heading %q, want 工作台", when, got)
				}
				if got := btText(t, ctx, "[data-testid=new-workbench]"); got != "新建工作台" {
					t.Errorf("%s: button %q, want 新建工作台", when, got)
				}
				lang, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
				if err != nil || lang != "zh-CN" {
					t.Errorf("%s: <html lang=%q> (%v)", when, lang, err)
				}
			}
			checkChinese("after the switch")
			btDo(t, ctx, "reload", chromedp.Reload())
			checkChinese("after a reload")

			if scripts == "on" {
				// And back: English again, also after a reload; then
				// Chinese once more for the screenshot (last: asking
				// the DevTools DOM for fonts unsettles later clicks).
				btSubmit(t, ctx, "click English", chromedp.Click(chromedp.CSS(`[data-testid=lang-en]`)))
				btDo(t, ctx, "reload", chromedp.Reload())
				if got := btText(t, ctx, "h1"); got != "Workbenches" {
					t.Errorf("after switching back: heading %q", got)
				}
				btSubmit(t, ctx, "click 中文 again", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
				checkChinese("switched again")
				checkScreenshot(t, ctx)
			}
		})
	}
}

// checkScreenshot saves the Chinese home page as a PNG in the test's temp
// dir and checks that the heading's box holds drawn characters: enough
// pixels that differ from the page's background, spread over most of the
// heading's width (three CJK characters, not one blot).
func checkScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](
		`(() => { const r = document.querySelector("h1").getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`))
	if err != nil || len(box) != 4 {
		t.Fatalf("heading box: %v %v", box, err)
	}
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	btScreenshot(t, ctx, "home-zh-CN.png") // for people, beside the other screenshots
	p := filepath.Join(t.TempDir(), "home-zh-CN.png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("decode %s: %v", p, err)
	}
	// The screenshot is at device pixels; the box is in CSS pixels.
	dpr, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.devicePixelRatio`))
	if dpr <= 0 {
		dpr = 1
	}
	r := image.Rect(int(box[0]*dpr), int(box[1]*dpr), int((box[0]+box[2])*dpr), int((box[1]+box[3])*dpr)).Intersect(img.Bounds())
	if r.Dx() < 20 || r.Dy() < 10 {
		t.Fatalf("heading box %v too small in a %v screenshot", r, img.Bounds())
	}
	bg := img.At(r.Min.X, r.Min.Y)
	br, bgG, bb, _ := bg.RGBA()
	ink, minX, maxX := 0, r.Max.X, r.Min.X
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if absDiff(cr, br)+absDiff(cg, bgG)+absDiff(cb, bb) > 3*0x3000 {
				ink++
				minX, maxX = min(minX, x), max(maxX, x)
			}
		}
	}
	// Three characters of a heading-sized font ink far more than 150
	// pixels; a page that drew no heading (or drew it in the background
	// colour) has none.
	if ink < 150 {
		t.Errorf("screenshot %s: only %d drawn pixels in the heading %v", p, ink, r)
	}
	if maxX-minX < int(30*dpr) {
		t.Errorf("screenshot %s: ink spans only %d px of the heading", p, maxX-minX)
	}
	t.Logf("screenshot %s: %d drawn pixels over %d px in the heading %v", p, ink, maxX-minX, r)

	// Drawn pixels could be the empty boxes of a missing glyph: Chromium
	// also says which platform font drew the heading's characters, and it
	// must be a CJK one (Noto Sans CJK, from fonts-noto-cjk) for all of
	// them.
	var fonts []*css.PlatformFontUsage
	btDo(t, ctx, "ask which fonts drew the heading", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, dom.Enable, dom.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, css.Enable, cdp.Empty{}); err != nil {
			return err
		}
		doc, err := cdp.Call(ctx, tg, dom.GetDocument, dom.GetDocumentParams{})
		if err != nil {
			return err
		}
		h1, err := cdp.Call(ctx, tg, dom.QuerySelector, dom.QuerySelectorParams{NodeID: doc.Root.NodeID, Selector: "h1"})
		if err != nil {
			return err
		}
		r, err := cdp.Call(ctx, tg, css.GetPlatformFontsForNode, css.GetPlatformFontsForNodeParams{NodeID: h1.NodeID})
		fonts = r.Fonts
		return err
	}))
	glyphs, cjk := 0.0, 0.0
	var names []string
	for _, f := range fonts {
		names = append(names, fmt.Sprintf("%s (%v)", f.FamilyName, f.GlyphCount))
		glyphs += f.GlyphCount
		if strings.Contains(strings.ToUpper(f.FamilyName+" "+f.PostScriptName), "CJK") {
			cjk += f.GlyphCount
		}
	}
	t.Logf("the heading was drawn with %v", names)
	if glyphs < 3 || cjk != glyphs {
		t.Errorf("the heading was drawn with %v: want a CJK font for every character (is fonts-noto-cjk installed?)", names)
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// More of the portal in Chinese, each page screenshot beside home-zh-CN.png
// and checked to show Chinese: a running workbench's page, /usage,
// /calculator and an admin page. Each check reads an element's text and
// finds its characters drawn in the screenshot (ink inside its box).
func TestBrowserChinesePagesScreenshots(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	code, wb := p.api("POST", "/api/v1/workbenches", admin, `{"name":"zh-shot","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, admin, id, "running")

	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btSubmit(t, ctx, "click 中文 in the header", chromedp.Click(chromedp.CSS(`[data-testid=lang-zh-CN]`)))
	for _, pg := range []struct {
		path, file string
		checks     [][2]string // css, the Chinese it shows
	}{
		{"/workbenches/" + id, "workbench-zh-CN.png", [][2]string{{"[data-testid=stop]", "停止"}, {"[data-testid=wb-state]", "运行中"},
			{"[data-testid=wb-history] tr:last-child .state", "运行中"}, {"[data-testid=wb-gpus-label]", "GPU"}}},
		{"/usage", "usage-zh-CN.png", [][2]string{{"h1", "用量"}}},
		{"/calculator", "calculator-zh-CN.png", [][2]string{{"h1", "成本计算器"}}},
		{"/admin/users", "admin-users-zh-CN.png", [][2]string{{"h1", "用户"}}},
	} {
		btNavigate(t, ctx, p.ts.URL+pg.path)
		lang, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
		if err != nil || lang != "zh-CN" {
			t.Errorf("%s: <html lang=%q> (%v)", pg.path, lang, err)
		}
		shot := btScreenshot(t, ctx, pg.file)
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("decode %s: %v", shot, err)
		}
		for _, c := range pg.checks {
			if got := btText(t, ctx, c[0]); got != c[1] {
				t.Errorf("%s: %s reads %q, want %q", pg.path, c[0], got, c[1])
				continue
			}
			if ink := inkIn(t, ctx, img, c[0]); ink < 40 {
				t.Errorf("%s: %s (%s) has only %d drawn pixels in %s", pg.path, c[0], c[1], ink, shot)
			} else {
				t.Logf("%s: %s (%s): %d drawn pixels in %s", pg.path, c[0], c[1], ink, shot)
			}
		}
	}
}

// inkIn counts the pixels of img (a full-page screenshot) inside the box
// of the element matching sel that differ clearly from the box's corner.
func inkIn(t *testing.T, ctx context.Context, img image.Image, sel string) int {
	t.Helper()
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector(`+btJsString(sel)+
		`).getBoundingClientRect(); return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; })()`))
	if err != nil || len(box) != 4 {
		t.Fatalf("box of %s: %v %v", sel, box, err)
	}
	dpr, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.devicePixelRatio`))
	if dpr <= 0 {
		dpr = 1
	}
	r := image.Rect(int(box[0]*dpr), int(box[1]*dpr), int((box[0]+box[2])*dpr), int((box[1]+box[3])*dpr)).Intersect(img.Bounds())
	if r.Empty() {
		return 0
	}
	br, bg, bb, _ := img.At(r.Min.X, r.Min.Y).RGBA()
	ink := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if absDiff(cr, br)+absDiff(cg, bg)+absDiff(cb, bb) > 3*0x3000 {
				ink++
			}
		}
	}
	return ink
}
