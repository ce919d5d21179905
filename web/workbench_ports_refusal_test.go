package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// A port the workbench page's form refuses is explained in the reader's
// language, without the API's field name ("extra_ports: …"), and nothing
// is saved.
func TestPortRefusalReadsInTheReadersLanguage(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	lin, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(lin, "ports", models.GPUNeed{})
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	for _, tc := range []struct {
		port   string
		en, zh string
	}{
		{"80", "Could not change the ports: port 80 — use ports 1024–65535 (apps run as a non-root user).",
			"无法修改端口：端口 80——请使用 1024–65535 的端口（应用以非 root 用户运行）。"},
		// Jupyter's own port names no placeholder ("/wb/{id}/" once).
		{"8888", "Could not change the ports: port 8888 is the workbench's own app (Jupyter) — its Open button reaches it.",
			"无法修改端口：端口 8888 是工作台自己的应用（Jupyter）——用它的“打开”按钮访问。"},
	} {
		for c, want := range map[*http.Client]string{en: tc.en, zh: tc.zh} {
			res := p.postForm(c, "/workbenches/"+wb.ID+"/ports", url.Values{"port": {tc.port}})
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("port %s: status %d", tc.port, res.StatusCode)
			}
			_, body := p.get(c, res.Header.Get("Location"))
			if got := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=flash][data-kind=error]`).Text()); got != want {
				t.Errorf("flash %q, want %q", got, want)
			}
		}
	}
	if got, err := p.srv.Store.WorkbenchByID(ctx, wb.ID); err != nil || len(got.ExtraPorts) != 0 {
		t.Fatalf("ports after the refusals: %v (%v)", got.ExtraPorts, err)
	}
}
