package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"workbench/models"
)

// A student who left asked for their data to be erased. The admin opens
// Delete on bob's row: the page names his running workbench, his home
// volume, his booking and groups, and what stays (his bills, under
// deleted-<id>). A wrong name typed deletes nothing. The right one stops
// and removes his container on the real engine, removes his home volume,
// ends his session and token, deletes his keys, notifications, watches and
// memberships, releases his booking — and keeps his ledger lines, which
// the billing page shows as "bob (deleted-<id>)". The name bob is free
// for a new account at once.
func TestAdminDeletesAUserWithARunningWorkbench(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	st := p.srv.Store
	bobToken := tokenFor(t, p, "bob", "user")
	bob, err := st.UserByUsername(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	code, wb := p.api("POST", "/api/v1/workbenches", bobToken, `{"name":"notes","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, bobToken, id, "running")
	running, err := st.WorkbenchByID(ctx, id)
	if err != nil || running.ContainerID == "" {
		t.Fatalf("the running workbench's container: %v (%v)", running, err)
	}
	vol := "wb-home-" + installID(t, p) + "-bob"
	if _, err := cli.VolumeInspect(ctx, vol); err != nil {
		t.Fatalf("bob's home volume: %v", err)
	}
	// What else bob has.
	g, err := st.CreateGroup(ctx, "thesis-lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddGroupMember(ctx, g.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	key, _ := newAuthorizedKey(t, "bob@laptop")
	if _, err := st.CreateSSHKey(ctx, bob.ID, "laptop", key); err != nil {
		t.Fatal(err)
	}
	if err := st.AddNotification(ctx, bob.ID, "hello", ""); err != nil {
		t.Fatal(err)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", bobToken, `{"gpu_model":"NVIDIA H100 80GB HBM3"}`); code != 201 {
		t.Fatalf("watch: %d %v", code, body)
	}
	start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour)
	if code, body := p.api("POST", "/api/v1/reservations", bobToken,
		`{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":"`+start.Format(time.RFC3339)+`","ends_at":"`+start.Add(2*time.Hour).Format(time.RFC3339)+`"}`); code != 201 {
		t.Fatalf("booking: %d %v", code, body)
	}
	if _, err := st.Credit(ctx, bob.ID, 2_000_000, "", "course grant", "admin"); err != nil {
		t.Fatal(err)
	}
	bc := p.client()
	p.login(bc, "bob", "bob-password")

	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	_, page := p.get(ac, "/admin/users")
	if href := parseHTML(t, page).Find(`[data-testid=user-row][data-username=bob] [data-testid=delete-user]`).AttrOr("href", ""); href != "/admin/users/"+itoa(bob.ID)+"/delete" {
		t.Fatalf("bob's row has no Delete link (%q)", href)
	}
	_, page = p.get(ac, "/admin/users/"+itoa(bob.ID)+"/delete")
	doc := parseHTML(t, page)
	removes := doc.Find(`[data-testid=user-delete-removes]`).Text()
	for _, want := range []string{"notes", vol, "1 GPU booking", "SSH keys (1)", "thesis-lab"} {
		if !strings.Contains(removes, want) {
			t.Errorf("the confirmation does not name %q: %q", want, removes)
		}
	}
	if busy := doc.Find(`[data-testid=user-delete-busy]`).Text(); !strings.Contains(busy, "notes") {
		t.Errorf("the running workbench is not said to be stopped: %q", busy)
	}
	tomb := "deleted-" + itoa(bob.ID)
	billedAs := "bob (" + tomb + ")" // the old name beside the tombstone's
	if keeps := doc.Find(`[data-testid=user-delete-keeps]`).Text(); !strings.Contains(keeps, billedAs) {
		t.Errorf("what stays: %q", keeps)
	}

	// A wrong confirmation deletes nothing.
	res, page := p.postFormBody(ac, "/admin/users/"+itoa(bob.ID)+"/delete", url.Values{"confirm": {"Bob"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(parseHTML(t, page).Find(`.field-error`).Text(), "type bob exactly") {
		t.Fatalf("wrong confirmation: %d", res.StatusCode)
	}
	if u, _ := st.UserByID(ctx, bob.ID); u.Deleted() {
		t.Fatal("a wrong confirmation deleted bob")
	}
	if c, err := cli.ContainerInspect(ctx, running.ContainerID); err != nil || !c.State.Running {
		t.Fatalf("a wrong confirmation stopped bob's workbench: %v", err)
	}

	res = p.postForm(ac, "/admin/users/"+itoa(bob.ID)+"/delete", url.Values{"confirm": {"bob"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	_, page = p.get(ac, "/admin/users")
	doc = parseHTML(t, page)
	if f := doc.Find(`[data-testid=flash]`).Text(); !strings.Contains(f, "The account bob is deleted with its workbenches and home volume") {
		t.Errorf("flash %q", f)
	}
	if doc.Find(`[data-testid=user-row][data-username=`+tomb+`] [data-testid=user-deleted]`).Length() != 1 ||
		doc.Find(`[data-testid=user-row][data-username=`+tomb+`] [data-testid=delete-user]`).Length() != 0 {
		t.Error("the users page does not show the tombstone as deleted, without actions")
	}

	// On the engine: the container and the home volume are gone.
	if _, err := cli.ContainerInspect(ctx, running.ContainerID); !client.IsErrNotFound(err) {
		t.Errorf("bob's container is still there: %v", err)
	}
	if _, err := cli.VolumeInspect(ctx, vol); !client.IsErrNotFound(err) {
		t.Errorf("bob's home volume is still there: %v", err)
	}
	// In the portal: everything he had is gone, his bills are not.
	u, _ := st.UserByID(ctx, bob.ID)
	if u.Username != tomb || !u.Deleted() || u.ErasedAt == nil || !u.Disabled || u.PasswordHash != "" {
		t.Fatalf("tombstone %+v", u)
	}
	if _, err := st.WorkbenchByID(ctx, id); err == nil {
		t.Error("bob's workbench is still listed")
	}
	if keys, _ := st.ListSSHKeys(ctx, bob.ID); len(keys) != 0 {
		t.Errorf("ssh keys left: %v", keys)
	}
	if notes, _ := st.ListNotifications(ctx, bob.ID, 10); len(notes) != 0 {
		t.Errorf("notifications left: %v", notes)
	}
	if gr, _ := st.GroupByName(ctx, "thesis-lab"); len(gr.Members) != 0 {
		t.Errorf("still a member: %v", gr.Members)
	}
	rs, _ := st.Reservations(ctx, time.Time{})
	for _, r := range rs {
		if r.UserID == bob.ID && r.ReleasedAt == nil {
			t.Errorf("booking #%d not released", r.ID)
		}
	}
	if code, _ := p.api("GET", "/api/v1/me", bobToken, ""); code != 401 {
		t.Errorf("bob's API token still works: %d", code)
	}
	if res, _ := p.get(bc, "/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("bob's session still opens the home page: %d", res.StatusCode)
	}
	if res := p.postForm(p.client(), "/login", url.Values{"username": {"bob"}, "password": {"bob-password"}}); res.StatusCode == http.StatusSeeOther {
		t.Error("bob still signs in")
	}
	_, page = p.get(ac, "/admin/billing")
	if !strings.Contains(page, billedAs) {
		t.Errorf("the billing page does not show the deleted account's lines as %q", billedAs)
	}
	entries, _ := st.ListAudit(ctx, 50)
	audited := false
	for _, e := range entries {
		if e.Action == "user.delete" && e.Target == "bob" && strings.Contains(e.Before, `"bob"`) && strings.Contains(e.After, tomb) {
			audited = true
		}
	}
	if !audited {
		t.Error("the deletion is not audited as user.delete with the old name")
	}

	// The name is free: a new bob, with an empty home of his own.
	adminToken := tokenFor(t, p, "admin", "admin")
	if code, body := p.api("POST", "/api/v1/admin/users", adminToken, `{"username":"bob","password":"new-bob-password"}`); code != 201 || body["username"] != "bob" {
		t.Fatalf("a new bob: %d %v", code, body)
	}
	p.srv.Manager.Wait()
}

// What the API and the page refuse: a wrong or missing confirmation
// (nothing happens), the last administrator, one's own account, a
// tombstone; and two administrators deleting each other at once leave
// one. Each refusal has its code.
func TestAdminUserDeleteRefusals(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	adminToken := tokenFor(t, p, "admin", "admin")
	admin, _ := st.UserByUsername(ctx, "admin")
	carolToken := tokenFor(t, p, "carol", "user")
	carol, _ := st.UserByUsername(ctx, "carol")
	path := "/api/v1/admin/users/" + itoa(carol.ID)
	for _, c := range []struct {
		path, code string
		status     int
	}{
		{path, "invalid_confirm", http.StatusBadRequest},
		{path + "?confirm=Carol", "invalid_confirm", http.StatusBadRequest},
		{path + "?confirm=carol&force=true", "unknown_parameter", http.StatusBadRequest},
		{"/api/v1/admin/users/99999?confirm=carol", "not_found", http.StatusNotFound},
		// The only administrator, deleting their own account.
		{"/api/v1/admin/users/" + itoa(admin.ID) + "?confirm=admin", "last_admin", http.StatusConflict},
	} {
		if code, body := p.api("DELETE", c.path, adminToken, ""); code != c.status || errCode(body) != c.code {
			t.Errorf("DELETE %s: %d %v, want %d %s", c.path, code, body, c.status, c.code)
		}
	}
	if code, body := p.api("DELETE", path+"?confirm=carol", carolToken, ""); code != 403 {
		t.Errorf("a user used the admin delete: %d %v", code, body)
	}
	if code, body := p.api("DELETE", path+"?confirm=carol", adminToken, `{"confirm":"carol"}`); code != 400 {
		t.Errorf("a body sent to DELETE: %d %v", code, body)
	}
	if u, _ := st.UserByID(ctx, carol.ID); u.Deleted() {
		t.Fatal("a refused delete deleted carol")
	}
	// The page says why, and offers no form, for one's own account.
	opsToken := tokenFor(t, p, "ops", "admin")
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	_, page := p.get(ac, "/admin/users/"+itoa(admin.ID)+"/delete")
	doc := parseHTML(t, page)
	if r := doc.Find(`[data-testid=user-delete-refused]`).Text(); !strings.Contains(r, "your own account") || doc.Find(`[data-testid=user-delete-submit]`).Length() != 0 {
		t.Errorf("own account's page: refused %q", r)
	}
	if code, body := p.api("DELETE", "/api/v1/admin/users/"+itoa(admin.ID)+"?confirm=admin", adminToken, ""); code != 409 || errCode(body) != "self_delete" {
		t.Errorf("own account beside another admin: %d %v", code, body)
	}
	res := p.postForm(ac, "/admin/users/"+itoa(admin.ID)+"/delete", url.Values{"confirm": {"admin"}})
	if res.StatusCode != http.StatusConflict {
		t.Errorf("own account from the page: %d", res.StatusCode)
	}

	code, body := p.api("DELETE", path+"?confirm=carol", adminToken, "")
	if code != 200 || body["username"] != "deleted-"+itoa(carol.ID) || body["deleted_at"] == nil || body["disabled"] != true {
		t.Fatalf("delete: %d %v", code, body)
	}
	if code, body := p.api("DELETE", "/api/v1/admin/users/"+itoa(carol.ID)+"?confirm=deleted-"+itoa(carol.ID), adminToken, ""); code != 404 || errCode(body) != "not_found" {
		t.Errorf("a tombstone deleted again: %d %v", code, body)
	}
	if code, body := p.api("PUT", "/api/v1/admin/users/"+itoa(carol.ID)+"/disabled", adminToken, `{"disabled":false}`); code != 404 {
		t.Errorf("a tombstone enabled: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/admin/users", adminToken, `{"username":"carol","password":"carol-password-2"}`); code != 201 {
		t.Errorf("the name carol is not free again: %d %v", code, body)
	}

	// admin and ops delete each other at once: one of them remains.
	ops, _ := st.UserByUsername(ctx, "ops")
	var wg sync.WaitGroup
	for _, d := range []struct {
		token string
		u     *models.User
	}{{adminToken, ops}, {opsToken, admin}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.apiBytes("DELETE", "/api/v1/admin/users/"+itoa(d.u.ID)+"?confirm="+d.u.Username, d.token, "")
		}()
	}
	wg.Wait()
	left := 0
	for _, u := range []*models.User{admin, ops} {
		if fresh, _ := st.UserByID(ctx, u.ID); !fresh.Deleted() {
			left++
		}
	}
	if left != 1 {
		t.Errorf("%d administrators left after they deleted each other, want 1", left)
	}
	p.srv.Manager.Wait()
}
