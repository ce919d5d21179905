package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A Chinese reader's workbench page writes its history's times as the
// rest of the page does ("2026年12月5日 10:34 UTC"), not "2026-12-05 10:34 UTC"
// beside them; an English reader keeps the ISO form.
func TestWorkbenchHistoryDatesInTheReadersLanguage(t *testing.T) {
	p := newPortal(t)
	bg := context.Background()
	tokenFor(t, p, "ada", models.RoleUser)
	ada, _ := p.srv.Store.UserByUsername(bg, "ada")
	wb := p.runningRecord(ada, "dated", models.GPUNeed{})
	zh, en := p.readersSignedIn("ada", "ada-password")
	year := time.Now().UTC().Format("2006")
	for c, want := range map[*http.Client]string{zh: year + "年", en: year + "-"} {
		_, page := p.get(c, "/workbenches/"+wb.ID)
		first := strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=wb-history] tr td`).First().Text())
		if !strings.HasPrefix(first, want) {
			t.Errorf("history time %q, want it to begin %q", first, want)
		}
	}
}

// The first admin's display name is the portal's own word, so a Chinese
// reader sees it in Chinese ("Administrator" stood in the header of every
// zh page); a name someone gave stays as written.
func TestSeededAdminNameInTheReadersLanguage(t *testing.T) {
	p := newPortal(t)
	zh, en := p.readersSignedIn("admin", adminPassword)
	for c, want := range map[*http.Client]string{zh: "管理员", en: "Administrator"} {
		_, page := p.get(c, "/")
		if got := strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=account-name]`).Text()); got != want {
			t.Errorf("account name %q, want %q", got, want)
		}
	}
}
