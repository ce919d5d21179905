package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// capError checks a 409 refusal with code whose message names the limit
// and how to make room.
func capError(t *testing.T, what string, code int, out map[string]any, want string, limit int) {
	t.Helper()
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if code != http.StatusConflict || errCode(out) != want || !strings.Contains(msg, fmt.Sprintf("(%d", limit)) || !strings.Contains(msg, "to make room") {
		t.Fatalf("%s past the cap: %d %v; want 409 %s naming the limit and how to make room", what, code, out, want)
	}
}

// POST /api/v1/tokens stops at models.MaxAPITokensPerUser live tokens (the
// security review's 300 calls all got 201); revoking one makes room.
func TestAPITokenCapOverAPI(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "dana", "user") // the first of them
	var lastID float64
	for i := 1; i < models.MaxAPITokensPerUser; i++ {
		code, out := p.api("POST", "/api/v1/tokens", tok, fmt.Sprintf(`{"name": "t%d", "expires_days": 0}`, i))
		if code != http.StatusCreated {
			t.Fatalf("token %d: %d %v", i, code, out)
		}
		lastID = out["item"].(map[string]any)["id"].(float64)
	}
	code, out := p.api("POST", "/api/v1/tokens", tok, `{"name": "one-more"}`)
	capError(t, "API token", code, out, "too_many_tokens", models.MaxAPITokensPerUser)
	if code, out := p.api("DELETE", fmt.Sprintf("/api/v1/tokens/%d", int64(lastID)), tok, ""); code != http.StatusNoContent {
		t.Fatalf("revoke: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/tokens", tok, `{"name": "one-more"}`); code != http.StatusCreated {
		t.Fatalf("after a revoke: %d %v; want 201", code, out)
	}
}

// POST /api/v1/ssh-keys stops at models.MaxSSHKeysPerUser keys, pending
// ones included; so does a workbench's POST .../tokens at its cap.
func TestSSHKeyAndWorkbenchTokenCapsOverAPI(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "erin", "user")
	uid := mustUserID(t, p, "erin")
	for i := range models.MaxSSHKeysPerUser {
		key, _ := newAuthorizedKey(t, "erin@host")
		if _, err := p.srv.Store.CreateSSHKey(ctx, uid, fmt.Sprintf("k%d", i), key); err != nil {
			t.Fatal(err)
		}
	}
	key, _ := newAuthorizedKey(t, "erin@laptop")
	code, out := p.api("POST", "/api/v1/ssh-keys", tok, jsonBody(map[string]string{"name": "laptop", "public_key": key}))
	capError(t, "SSH key", code, out, "too_many_ssh_keys", models.MaxSSHKeysPerUser)
	if keys, _ := p.srv.Store.ListSSHKeys(ctx, uid); len(keys) != models.MaxSSHKeysPerUser {
		t.Fatalf("%d keys after the refusal", len(keys))
	}

	wb := &models.Workbench{Name: "nb", OwnerID: uid, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range models.MaxWorkbenchTokensPerWorkbench {
		if _, _, err := p.srv.Store.CreateWorkbenchToken(ctx, uid, wb.ID, fmt.Sprintf("t%d", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	code, out = p.api("POST", "/api/v1/workbenches/"+wb.ID+"/tokens", tok, `{"name": "one-more", "expires_days": 1}`)
	capError(t, "workbench token", code, out, "too_many_tokens", models.MaxWorkbenchTokensPerWorkbench)

	// The workbench page's form says so beside the name and keeps the
	// name and the lifetime chosen.
	c := p.client()
	p.loginSudo(c, "erin", "erin-password")
	res, page := p.postFormBody(c, "/workbenches/"+wb.ID+"/tokens", url.Values{"name": {"vscode"}, "expires_days": {"7"}})
	doc := mpDoc(t, page)
	if msg := doc.Find(`[data-testid=wb-token-error]`).Text(); res.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "revoke one") {
		t.Errorf("the workbench token form past the cap: %d %q", res.StatusCode, msg)
	}
	if v, _ := doc.Find(`[data-testid=wb-token-name]`).Attr("value"); v != "vscode" {
		t.Errorf("the name typed is lost: %q", v)
	}
	if v, _ := doc.Find(`[data-testid=wb-token-expires] option[selected]`).Attr("value"); v != "7" {
		t.Errorf("the lifetime chosen is lost: %q selected, want 7", v)
	}
}

// The SSH keys form at the cap shows the refusal in the page, in the
// reader's language, and keeps the name and the pasted key.
func TestSSHKeyCapFormInChinese(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "lin", "user")
	uid := mustUserID(t, p, "lin")
	for i := range models.MaxSSHKeysPerUser {
		key, _ := newAuthorizedKey(t, "lin@host")
		if _, err := p.srv.Store.CreateSSHKey(ctx, uid, fmt.Sprintf("k%d", i), key); err != nil {
			t.Fatal(err)
		}
	}
	zh, _ := p.readersSignedIn("lin", "lin-password")
	p.sudo(zh, "lin-password")
	key, _ := newAuthorizedKey(t, "lin@laptop")
	res, page := p.postFormBody(zh, "/settings/ssh-keys", url.Values{"name": {"new-laptop"}, "public_key": {key}})
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("add a key past the cap: %d, want 400 with the form", res.StatusCode)
	}
	doc := mpDoc(t, page)
	msg := strings.Join(strings.Fields(doc.Find(`[data-testid=error-name]`).Text()), " ")
	if !strings.Contains(msg, fmt.Sprintf("上限（%d 个", models.MaxSSHKeysPerUser)) || !strings.Contains(msg, "腾出名额") {
		t.Errorf("the page says %q; want the Chinese refusal naming the limit", msg)
	}
	if v, _ := doc.Find(`input[name=name]`).Attr("value"); v != "new-laptop" {
		t.Errorf("the name typed is lost: %q", v)
	}
	if !strings.Contains(doc.Find(`textarea[name=public_key]`).Text(), strings.Fields(key)[1]) {
		t.Error("the pasted key is lost")
	}
}

// In Chromium: Create on the API tokens page at the cap shows the refusal
// in the page, with the name typed and the lifetime chosen kept.
func TestBrowserTokenCapKeepsTheForm(t *testing.T) {
	p, b := btAdminIn(t, true)
	ctx := context.Background()
	admin, err := p.srv.Store.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	live, _ := p.srv.Store.ListTokens(ctx, admin.ID)
	for i := len(live); i < models.MaxAPITokensPerUser; i++ {
		if _, _, err := p.srv.Store.CreateToken(ctx, admin.ID, fmt.Sprintf("t%d", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	btNavigate(t, b, p.ts.URL+"/settings/tokens")
	btDo(t, b, "name a token", chromedp.SendKeys(chromedp.CSS(`[data-testid=new-token-form] input[name=name]`), "laptop"))
	btDo(t, b, "choose 90 days", chromedp.SetValue(chromedp.CSS(`[data-testid=new-token-form] select[name=expires_days]`), "90"))
	resp := btSubmit(t, b, "click Create", chromedp.Click(chromedp.CSS(`[data-testid=new-token-form] button[type=submit]`)))
	if resp.Status == 403 {
		btConfirmSudo(t, b, resp, btAdminPassword)
	}
	if msg := btText(t, b, `[data-testid=error-name]`); !strings.Contains(msg, fmt.Sprintf("(%d)", models.MaxAPITokensPerUser)) || !strings.Contains(msg, "revoke one") {
		t.Errorf("the page says %q; want the cap's refusal", msg)
	}
	got, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector("[data-testid=new-token-form] input[name=name]").value + " " + document.querySelector("[data-testid=new-token-form] select[name=expires_days]").value`))
	if err != nil {
		t.Fatal(err)
	}
	if got != "laptop 90" {
		t.Errorf("the form holds %q after the refusal, want what was typed (laptop 90)", got)
	}
	if toks, _ := p.srv.Store.ListTokens(ctx, admin.ID); len(toks) != models.MaxAPITokensPerUser {
		t.Errorf("%d tokens after the refusal", len(toks))
	}
}
