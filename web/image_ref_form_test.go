package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// An admin who mistypes an image reference on the catalog form is told
// which part is wrong, in their language, with what they typed kept — not
// the reference library's English "invalid reference format: repository
// name (library/X) must be lowercase" inside a Chinese sentence.
func TestImageFormNamesWhatIsWrongWithAReference(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	c.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	p.loginSudo(c, "admin", adminPassword)
	form := url.Values{"name": {"Torch"}, "image": {"Quay.io/Jupyter/PyTorch-Notebook:Cuda12"}, "enabled": {"true"},
		"start_command": {"jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}"},
		"run_as_user":   {"1000"}, "home_path": {"/home/jovyan"}, "open_path": {"/lab"}}
	for _, tc := range []struct{ image, want string }{
		{"Quay.io/Jupyter/PyTorch-Notebook:Cuda12", "不是有效的镜像引用：名称只能用小写（quay.io/jupyter/pytorch-notebook:Cuda12）"},
		{"https://quay.io/jupyter/base-notebook", "不是有效的镜像引用：去掉 https://，写成 仓库地址/名称:标签"},
		{"quay.io/jupyter/base notebook", "不是有效的镜像引用：其中有空格"},
	} {
		form.Set("image", tc.image)
		res, page := p.postFormBody(c, "/admin/images", form)
		doc := parseHTML(t, page)
		got := strings.TrimSpace(doc.Find(`[data-testid=error-image]`).Text())
		if v, _ := doc.Find(`input[name=image]`).Attr("value"); res.StatusCode != http.StatusBadRequest || v != tc.image {
			t.Errorf("%q: status %d, field kept as %q", tc.image, res.StatusCode, v)
		}
		if !strings.Contains(got, tc.want) || strings.Contains(got, "reference format") {
			t.Errorf("%q: error reads %q, want %q", tc.image, got, tc.want)
		}
	}
}

// A registry mirror with capitals in its path is named as that mistake,
// with the path to use, in the reader's language (it read "must be a
// registry host such as docker.io", which harbor.lab.cn is).
func TestMirrorWithCapitalsInItsPathIsNamed(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	c.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	p.loginSudo(c, "admin", adminPassword)
	res, page := p.postFormBody(c, "/admin/registries", url.Values{"mirrors": {"quay.io = harbor.lab.cn/Quay"}})
	got := strings.TrimSpace(parseHTML(t, page).Find(`[data-testid=error-mirrors]`).Text())
	if want := `第 1 行：镜像站 "harbor.lab.cn/Quay" 路径必须是小写（harbor.lab.cn/quay）`; res.StatusCode != http.StatusBadRequest || got != want {
		t.Errorf("status %d, error %q\nwant %q", res.StatusCode, got, want)
	}
}

// In Chromium, with JavaScript on and off: an administrator types an image
// reference with capitals on the new-image form and clicks Save; the form
// comes back with what was typed and names the mistake with the reference
// to use.
func TestBrowserImageFormNamesAReferenceMistake(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			btNavigate(t, b, p.ts.URL+"/sudo?next="+url.QueryEscape("/admin/images/new"))
			btDo(t, b, "type the password", chromedp.SendKeys(chromedp.CSS(`[data-testid=sudo-form] input[name=sudo_password]`), btAdminPassword))
			btSubmit(t, b, "confirm the password", chromedp.Click(chromedp.CSS(`[data-testid=sudo-submit]`)))
			btNavigate(t, b, p.ts.URL+"/admin/images/new")
			const typed = "Quay.io/Jupyter/Base-Notebook:Latest"
			btDo(t, b, "type a name", chromedp.SendKeys(chromedp.CSS(`[data-testid=image-form] input[name=name]`), "Base"))
			btDo(t, b, "type the reference", chromedp.SendKeys(chromedp.CSS(`[data-testid=image-form] input[name=image]`), typed))
			btDo(t, b, "type the start command", chromedp.SendKeys(chromedp.CSS(`[data-testid=image-form] input[name=start_command]`),
				"jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}"))
			resp := btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(`[data-testid=image-form] button[type=submit]`)))
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("save: status %d, want 400", resp.Status)
			}
			want := "is not a valid image reference: the name is lowercase only (quay.io/jupyter/base-notebook:Latest)"
			if got := btText(t, b, `[data-testid=error-image]`); got != want {
				t.Errorf("error %q\nwant %q", got, want)
			}
			if got, err := chromedp.Run(b, chromedp.Value(chromedp.CSS(`[data-testid=image-form] input[name=image]`))); err != nil || got != typed {
				t.Errorf("the reference field holds %q (%v), want what was typed", got, err)
			}
		})
	}
}

// TestBrowserEditedImageKeepsItsExtraPorts: with JavaScript on and off, an
// admin opens an image's edit form, types extra ports, clicks Save, and
// finds them on the form when opening it again (an edit dropped them: the
// update stored every field but the ports).
func TestBrowserEditedImageKeepsItsExtraPorts(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			img, err := p.srv.Store.ImageByNameOrID(context.Background(), "PyTorch (CUDA 12)")
			if err != nil {
				t.Fatal(err)
			}
			edit := "/admin/images/" + itoa(img.ID) + "/edit"
			btNavigate(t, b, p.ts.URL+"/sudo?next="+url.QueryEscape(edit))
			btDo(t, b, "type the password", chromedp.SendKeys(chromedp.CSS(`[data-testid=sudo-form] input[name=sudo_password]`), btAdminPassword))
			btSubmit(t, b, "confirm the password", chromedp.Click(chromedp.CSS(`[data-testid=sudo-submit]`)))
			btNavigate(t, b, p.ts.URL+edit)
			btDo(t, b, "type extra ports", chromedp.SetValue(chromedp.CSS(`[data-testid=extra-ports]`), "6006, 8050"))
			resp := btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(`[data-testid=image-form] button[type=submit]`)))
			if resp.Status != http.StatusOK {
				t.Fatalf("save: status %d", resp.Status)
			}
			btNavigate(t, b, p.ts.URL+edit)
			if got, err := chromedp.Run(b, chromedp.Value(chromedp.CSS(`[data-testid=extra-ports]`))); err != nil || got != "6006, 8050" {
				t.Errorf("extra ports on the form after saving: %q (%v), want \"6006, 8050\"", got, err)
			}
		})
	}
}
