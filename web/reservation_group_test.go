package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// A lab books the server's eight H100s for its group (SPEC §3: bookings
// hold units "for a user or group"): any member launches on them, someone
// outside the group is refused while the booking holds them, only members
// see whose it is, and the group cannot be deleted under it.
func TestGroupReservation(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	carol := tokenFor(t, p, "carol", "user")
	code, g := p.api("POST", "/api/v1/admin/groups", admin, `{"name":"lab"}`)
	if code != http.StatusCreated {
		t.Fatalf("group: %d %v", code, g)
	}
	gid := fmt.Sprint(int64(g["id"].(float64)))
	for _, u := range []string{"alice", "bob"} {
		if code, out := p.api("PUT", "/api/v1/admin/groups/"+gid+"/members/"+u, admin, ""); code != 200 {
			t.Fatalf("add %s: %d %v", u, code, out)
		}
	}
	now := time.Now().UTC()
	booking := func(group string) string {
		return fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":8,"starts_at":%q,"ends_at":%q,"group":%q}`,
			now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), group)
	}
	code, notIn := p.api("POST", "/api/v1/reservations", carol, booking("lab"))
	if code != http.StatusBadRequest || errCode(notIn) != "invalid_group" {
		t.Fatalf("carol books for a group she is not in: %d %v, want 400 invalid_group", code, notIn)
	}
	// A group that does not exist reads the same to her: group names are
	// not hers to probe.
	code, none := p.api("POST", "/api/v1/reservations", carol, booking("nosuchlab"))
	msg := func(out map[string]any) string { return out["error"].(map[string]any)["message"].(string) }
	if code != http.StatusBadRequest || strings.ReplaceAll(msg(none), "nosuchlab", "lab") != msg(notIn) {
		t.Fatalf("a group that does not exist: %d %q; a group she is not in: %q — want the same answer", code, msg(none), msg(notIn))
	}
	code, r := p.api("POST", "/api/v1/reservations", alice, booking("lab"))
	if code != http.StatusCreated || r["group"] != "lab" || r["user"] != "alice" {
		t.Fatalf("alice books for lab: %d %v", code, r)
	}
	id := fmt.Sprint(int64(r["id"].(float64)))

	// Who sees whose it is: members and admins, not carol.
	seen := func(tok string) (user, group string) {
		_, list := p.api("GET", "/api/v1/reservations", tok, "")
		it := list["items"].([]any)[0].(map[string]any)
		return it["user"].(string), it["group"].(string)
	}
	if u, gr := seen(bob); u != "alice" || gr != "lab" {
		t.Errorf("bob sees %q %q, want alice, lab", u, gr)
	}
	if u, gr := seen(carol); u != "another user" || gr != "" {
		t.Errorf("carol sees %q %q, want another user and no group", u, gr)
	}

	// Carol, outside the group, cannot take a booked GPU.
	code, out := p.api("POST", "/api/v1/workbenches", carol, `{"name":"c","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusConflict || errCode(out) != "no_capacity" || !strings.Contains(out["error"].(map[string]any)["message"].(string), "8 reserved for someone else") {
		t.Fatalf("carol's launch: %d %v, want 409 no_capacity, 8 reserved for someone else", code, out)
	}
	// Bob, a member who did not book, launches on the group's booking.
	code, wb := p.api("POST", "/api/v1/workbenches", bob, `{"name":"b","image":"fake","flavor":"1x H100 80GB HBM3","reservation":`+id+`}`)
	if code != http.StatusAccepted {
		t.Fatalf("bob's launch on the group's booking: %d %v", code, wb)
	}
	waitState(t, p, bob, wb["id"].(string), "running")

	// Bob's pages offer the booking: the pool page names it and links a
	// launch with it; the launch form lists it.
	c := p.client()
	p.login(c, "bob", "bob-password")
	_, body := p.get(c, "/gpus")
	row := mpDoc(t, body).Find(`[data-testid=reservation-row][data-id="` + id + `"]`)
	if who := strings.TrimSpace(row.Find(`[data-testid=reservation-who]`).Text()); !strings.Contains(who, "alice, for group lab") {
		t.Errorf("bob's pool page says %q of the booking", who)
	}
	if row.Find(`[data-testid=reservation-launch]`).Length() != 1 {
		t.Error("bob's pool page offers no launch with the group's booking")
	}
	if opts := mpDoc(t, body).Find(`[data-testid=booking-group] option`); opts.Length() != 2 || opts.Eq(1).AttrOr("value", "") != "lab" {
		t.Errorf("the booking form offers %d choices, want me and lab", opts.Length())
	}
	_, body = p.get(c, "/workbenches/new")
	sel := mpDoc(t, body).Find(`[data-testid=launch-reservation]`)
	if !strings.Contains(sel.Text(), "group lab") {
		t.Error("the launch form does not offer the group's booking")
	}
	// alice booked it, not bob: the select must not call it his.
	if label := sel.Parent().Text(); !strings.Contains(label, "Use a booking") {
		t.Errorf("the launch form labels the group's booking %q", strings.Join(strings.Fields(label), " "))
	}

	// Bob sees the booking but did not make it: he is told who may cancel
	// it, not that it does not exist.
	if code, out := p.api("DELETE", "/api/v1/reservations/"+id, bob, ""); code != http.StatusForbidden || errCode(out) != "not_booker" ||
		!strings.Contains(out["error"].(map[string]any)["message"].(string), "only alice") {
		t.Fatalf("bob cancels the group's booking: %d %v, want 403 not_booker naming alice", code, out)
	}
	if code, _ := p.api("DELETE", "/api/v1/reservations/"+id, carol, ""); code != http.StatusNotFound {
		t.Fatalf("carol cancels a booking she cannot see: %d, want 404", code)
	}

	// The group cannot go while its booking is not over.
	if code, out := p.api("DELETE", "/api/v1/admin/groups/"+gid, admin, ""); code != http.StatusBadRequest ||
		!strings.Contains(out["error"].(map[string]any)["message"].(string), "#"+id) {
		t.Fatalf("delete the group under its booking: %d %v", code, out)
	}
	p.srv.Manager.Wait()
}

// In Chromium, with script on and off: a member picks "Book for: group
// lab" on the pool page's booking form; the booking says whose it is.
func TestBrowserBookForGroup(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserBookForGroup(t, js) })
	}
}

func testBrowserBookForGroup(t *testing.T, js bool) {
	p := newPortal(t)
	ctx := context.Background()
	u, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.srv.Store.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.AddGroupMember(ctx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")
	btNavigate(t, b, p.ts.URL+"/gpus")
	start := time.Now().UTC().Add(3 * time.Hour).Truncate(time.Hour)
	const layout = "2006-01-02T15:04"
	form := `[data-testid=booking-form] `
	btDo(t, b, "fill the booking form for the group",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=booking-form]`)),
		chromedp.SetValue(chromedp.CSS(form+`select[name=pool]`), resvH100),
		chromedp.SetValue(chromedp.CSS(form+`input[name=units]`), "1"),
		chromedp.SetValue(chromedp.CSS(form+`input[name=starts_at]`), start.Format(layout)),
		chromedp.SetValue(chromedp.CSS(form+`input[name=ends_at]`), start.Add(time.Hour).Format(layout)),
		chromedp.SetValue(chromedp.CSS(form+`[data-testid=booking-group]`), "lab"),
	)
	btScreenshot(t, b, "booking-for-group-"+jsName(js)+".png")
	if resp := btSubmit(t, b, "book", chromedp.Click(chromedp.CSS(`[data-testid=booking-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("book: %d", resp.Status)
	}
	if f := btText(t, b, `[data-testid=flash]`); !strings.Contains(f, "Any member of lab may use it.") {
		t.Fatalf("flash %q", f)
	}
	if who := btText(t, b, `[data-testid=reservation-who]`); !strings.Contains(who, "you, for group lab") {
		t.Fatalf("the booking reads %q", who)
	}
}
