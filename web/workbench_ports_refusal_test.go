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
	for c, want := range map[*http.Client]string{
		en: "Could not change the ports: port 80: use ports 1024–65535 (apps run as a non-root user)",
		zh: "无法修改端口：端口 80：请使用 1024–65535 的端口（应用以非 root 用户运行）",
	} {
		res := p.postForm(c, "/workbenches/"+wb.ID+"/ports", url.Values{"port": {"80"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("port 80: status %d", res.StatusCode)
		}
		_, body := p.get(c, res.Header.Get("Location"))
		if got := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=flash][data-kind=error]`).Text()); got != want {
			t.Errorf("flash %q, want %q", got, want)
		}
	}
	if got, err := p.srv.Store.WorkbenchByID(ctx, wb.ID); err != nil || len(got.ExtraPorts) != 0 {
		t.Fatalf("ports after the refusals: %v (%v)", got.ExtraPorts, err)
	}
}
