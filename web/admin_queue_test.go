package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// The admin queue page lists the priority classes and saves one from its
// form (a bad rank is shown back with the input kept); the queue's Cancel
// button takes a request out, Boost moves one to the front of its class
// (audited, refused cross-site); users cannot reach the page.
func TestAdminQueuePage(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	drainGPUs(t, p, admin, 0)
	_, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"waits","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`)
	if wb["state"] != "queued" {
		t.Fatalf("launch: %v", wb)
	}
	_, spot := p.api("POST", "/api/v1/workbenches", alice, `{"name":"spot","image":"fake","flavor":"1x H100 80GB HBM3","queue":true,"preemptible":true}`)
	if spot["state"] != "queued" || spot["priority"] != "preemptible" {
		t.Fatalf("preemptible launch: %v", spot)
	}
	user := p.client()
	p.login(user, "alice", "alice-password")
	if res, _ := p.get(user, "/admin/queue"); res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusNotFound {
		t.Fatalf("a user reached the admin queue: %d", res.StatusCode)
	}
	if _, body := p.get(user, "/gpus"); !strings.Contains(body, `data-testid="queue-row"`) || !strings.Contains(body, "waits") ||
		!strings.Contains(body, "1 workbench ahead of you") {
		t.Fatal("/gpus does not show alice her queued workbenches, with her place")
	}

	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	res, body := p.get(c, "/admin/queue")
	if res.StatusCode != 200 || strings.Count(body, `data-testid="class-row"`) != 3 || !strings.Contains(body, `data-id="`+wb["id"].(string)+`"`) {
		t.Fatalf("admin queue page: %d", res.StatusCode)
	}
	// The preemptible class is named once, not again as a badge.
	spotRow := mpDoc(t, body).Find(`[data-testid=queue-row][data-id="` + spot["id"].(string) + `"]`)
	if n := strings.Count(spotRow.Text(), "preemptible"); spotRow.Length() != 1 || n != 1 {
		t.Fatalf("preemptible row says it %d times: %q", n, spotRow.Text())
	}
	// The reason's "… ahead of you" speaks to the owner: the admin reads
	// the position in its own column.
	if strings.Contains(body, "ahead of you") || strings.Contains(body, "you are next") || !strings.Contains(spotRow.Text(), "0 free") {
		t.Fatalf("admin queue speaks to the owner: %q", spotRow.Text())
	}
	res, body = p.postFormBody(c, "/admin/priority-classes", url.Values{"name": {"course"}, "rank": {"lots"}, "description": {"exam week"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "a whole number between 0 and 1000") || !strings.Contains(body, `value="exam week"`) {
		t.Fatalf("bad rank: %d", res.StatusCode)
	}
	if res := p.postForm(c, "/admin/priority-classes", url.Values{"name": {"course"}, "rank": {"80"}, "description": {"exam week"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save class: %d", res.StatusCode)
	}
	_, classes := p.api("GET", "/api/v1/priority-classes", alice, "")
	if len(classes["items"].([]any)) != 4 {
		t.Fatalf("classes after the save: %v", classes)
	}
	// A flavor's default class from the page's form; a bad one is shown back.
	fl, err := p.srv.Store.FlavorByNameOrID(context.Background(), "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	target := "flavor:" + strconv.FormatInt(fl.ID, 10)
	if !strings.Contains(body, `value="`+target+`"`) {
		t.Fatal("the default form does not offer the flavor")
	}
	if res, body := p.postFormBody(c, "/admin/priority-defaults", url.Values{"target": {target}, "class": {"nope"}}); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "no priority class") {
		t.Fatalf("bad default class: %d", res.StatusCode)
	}
	if res := p.postForm(c, "/admin/priority-defaults", url.Values{"target": {target}, "class": {"batch"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save default: %d", res.StatusCode)
	}
	if _, body := p.get(c, "/admin/queue"); strings.Count(body, `data-testid="default-row"`) != 1 || !strings.Contains(body, "flavor 1x H100 80GB HBM3") {
		t.Fatal("the flavor's default is not listed")
	}
	// Boost: the button is on the row; the post is audited.
	if !strings.Contains(body, `data-testid="queue-boost"`) {
		t.Fatal("no Boost button on the admin queue")
	}
	if res := p.postForm(user, "/admin/queue/"+wb["id"].(string)+"/boost", url.Values{}); res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusNotFound {
		t.Fatalf("a user boosted: %d", res.StatusCode)
	}
	if res := p.postForm(c, "/admin/queue/"+wb["id"].(string)+"/boost", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("boost: %d", res.StatusCode)
	}
	if entries, _, err := p.srv.Store.AuditPage(context.Background(), "queue.boost", "admin", 0, 10); err != nil || len(entries) != 1 || entries[0].Target != wb["id"] {
		t.Fatalf("boost audit %+v (%v)", entries, err)
	}
	// Without the same-origin headers a browser sends (a cross-site form),
	// the boost is refused.
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/admin/queue/"+wb["id"].(string)+"/boost", strings.NewReader(""))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site boost: %v %v", res.StatusCode, err)
	} else {
		res.Body.Close()
	}
	if res := p.postForm(c, "/admin/queue/"+wb["id"].(string)+"/cancel", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	if _, got := p.api("GET", "/api/v1/workbenches/"+wb["id"].(string), alice, ""); got["state"] != "stopped" {
		t.Fatalf("after the admin's cancel: %v", got)
	}
	// Alice did not ask for it: she is told, with a link.
	_, notes := p.api("GET", "/api/v1/notifications", alice, "")
	items, _ := notes["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["message"] != "Workbench waits: removed from the queue by an administrator (admin)" ||
		items[0].(map[string]any)["link"] != "/workbenches/"+wb["id"].(string) {
		t.Fatalf("alice's notifications after the admin's cancel: %v", notes)
	}
}
