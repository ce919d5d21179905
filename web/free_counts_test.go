package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/web"
)

// The launch form and the pool page count as free only what the viewer may
// take now: units other users' active bookings hold back are counted apart
// ("6 free · 2 reserved for others now"; a launch on them is refused, "…
// reserved for someone else now"). One's own bookings, and a group's one
// is a member of, take nothing from one's count. Before, both pages
// counted booked units as free. So did the home page's pool line and the
// catalog's "Free now", which now count alike; an administrator's catalog
// counts every active booking, their own too ("booked now").
func TestFreeCountsLeaveOutOthersBookings(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*2" }) // 7 whole H100s, GPU 7 in two MIG instances
	admin := tokenFor(t, p, "admin", "admin")
	toks := map[string]string{}
	for _, u := range []string{"alice", "bob", "carol", "dave"} {
		toks[u] = tokenFor(t, p, u, "user")
	}
	code, g := p.api("POST", "/api/v1/admin/groups", admin, `{"name":"lab"}`)
	if code != http.StatusCreated {
		t.Fatalf("group: %d %v", code, g)
	}
	for _, u := range []string{"carol", "dave"} {
		if code, out := p.api("PUT", fmt.Sprintf("/api/v1/admin/groups/%v/members/%s", g["id"], u), admin, ""); code != 200 {
			t.Fatalf("add %s: %d %v", u, code, out)
		}
	}
	now := time.Now().UTC()
	book := func(who, what string) {
		t.Helper()
		body := fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3",%s,"starts_at":%q,"ends_at":%q}`, what, now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
		if code, out := p.api("POST", "/api/v1/reservations", toks[who], body); code != http.StatusCreated {
			t.Fatalf("%s books %s: %d %v", who, what, code, out)
		}
	}
	book("alice", `"units":2`)                                           // alice's own
	book("carol", `"units":1,"group":"lab"`)                             // for carol and dave
	book("alice", `"unit_kind":"mig","mig_profile":"1g.10gb","units":1`) // one of the two instances
	// A booking not open yet holds nothing back now.
	later := fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":3,"starts_at":%q,"ends_at":%q}`, now.Add(2*time.Hour).Format(time.RFC3339), now.Add(3*time.Hour).Format(time.RFC3339))
	if code, out := p.api("POST", "/api/v1/reservations", toks["dave"], later); code != http.StatusCreated {
		t.Fatalf("dave books for later: %d %v", code, out)
	}

	const whole, mig = "1x H100 80GB HBM3", "1x MIG 1g.10gb (H100 80GB HBM3)"
	text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
	for _, c := range []struct {
		user                   string
		gpus, migs, sum, units string
		home, catGPUs, catMIGs string
	}{
		// bob books nothing: alice's two GPUs and the lab's one are not his.
		{"bob", "4 free · 3 reserved for others now", "1 free · 1 reserved for others now",
			"Whole GPUs: 4 of 7 free · 3 reserved for others now", "MIG 1g.10gb: 1 of 2 free · 1 reserved for others now",
			"7 whole GPUs, 4 free · 3 reserved for others now. 1 GPU split into 2 MIG instances: 1 free · 1 reserved for others now.",
			"4 GPUs · 3 reserved for others now", "1 MIG instance · 1 reserved for others now"},
		// alice's own bookings are hers to launch on.
		{"alice", "6 free · 1 reserved for others now", "2 free", "Whole GPUs: 6 of 7 free · 1 reserved for others now", "MIG 1g.10gb: 2 of 2 free",
			"7 whole GPUs, 6 free · 1 reserved for others now. 1 GPU split into 2 MIG instances: 2 free.", "6 GPUs · 1 reserved for others now", "2 MIG instances"},
		// dave did not book the lab's GPU, but he is in the lab.
		{"dave", "5 free · 2 reserved for others now", "1 free · 1 reserved for others now",
			"Whole GPUs: 5 of 7 free · 2 reserved for others now", "MIG 1g.10gb: 1 of 2 free · 1 reserved for others now",
			"7 whole GPUs, 5 free · 2 reserved for others now. 1 GPU split into 2 MIG instances: 1 free · 1 reserved for others now.",
			"5 GPUs · 2 reserved for others now", "1 MIG instance · 1 reserved for others now"},
	} {
		uc := p.client()
		p.login(uc, c.user, c.user+"-password")
		_, body := p.get(uc, "/workbenches/new")
		doc := mpDoc(t, body)
		free := func(flavor string) string {
			return text(doc.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
				return s.Find(`input[value="`+flavor+`"]`).Length() == 1
			}).Find(`[data-testid=free-gpus]`))
		}
		if got := free(whole); got != c.gpus {
			t.Errorf("%s's launch form, %s: %q, want %q", c.user, whole, got, c.gpus)
		}
		if got := free(mig); got != c.migs {
			t.Errorf("%s's launch form, %s: %q, want %q", c.user, mig, got, c.migs)
		}
		_, body = p.get(uc, "/gpus")
		doc = mpDoc(t, body)
		if got := text(doc.Find(`[data-testid=gpu-model-free]`)); got != c.sum {
			t.Errorf("%s's pool page: %q, want %q", c.user, got, c.sum)
		}
		if got := text(doc.Find(`[data-testid=gpu-model-units][data-kind=mig][data-profile="1g.10gb"]`)); got != c.units {
			t.Errorf("%s's pool page, MIG: %q, want %q", c.user, got, c.units)
		}
		_, body = p.get(uc, "/")
		if got := text(mpDoc(t, body).Find(`[data-testid=gpu-summary]`)); got != c.home {
			t.Errorf("%s's home page: %q, want %q", c.user, got, c.home)
		}
		_, body = p.get(uc, "/catalog")
		doc = mpDoc(t, body)
		if got := catalogFree(doc, whole); got != c.catGPUs {
			t.Errorf("%s's catalog, %s: %q, want %q", c.user, whole, got, c.catGPUs)
		}
		if got := catalogFree(doc, mig); got != c.catMIGs {
			t.Errorf("%s's catalog, %s: %q, want %q", c.user, mig, got, c.catMIGs)
		}
	}

	// An administrator's catalog counts every active booking, their own
	// too; their home page, what they may take.
	if code, out := p.api("POST", "/api/v1/reservations", admin, fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":1,"starts_at":%q,"ends_at":%q}`,
		now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))); code != http.StatusCreated {
		t.Fatalf("admin books: %d %v", code, out)
	}
	ac := p.client()
	p.login(ac, "admin", adminPassword)
	_, body := p.get(ac, "/catalog")
	doc := mpDoc(t, body)
	if got, want := catalogFree(doc, whole), "3 GPUs · 4 booked now"; got != want {
		t.Errorf("admin's catalog, %s: %q, want %q", whole, got, want)
	}
	if got, want := catalogFree(doc, mig), "1 MIG instance · 1 booked now"; got != want {
		t.Errorf("admin's catalog, %s: %q, want %q", mig, got, want)
	}
	_, body = p.get(ac, "/")
	if got, want := text(mpDoc(t, body).Find(`[data-testid=gpu-summary]`)), "7 whole GPUs, 4 free · 3 reserved for others now. 1 GPU split into 2 MIG instances: 1 free · 1 reserved for others now."; got != want {
		t.Errorf("admin's home page: %q, want %q", got, want)
	}

	// The launch the form now says is refused: bob's five GPUs would take
	// booked ones.
	if code, out := p.api("POST", "/api/v1/flavors", admin, `{"name":"5x","gpu_model":"NVIDIA H100 80GB HBM3","gpu_count":5,"cpu_cores":1,"memory_gib":1}`); code != http.StatusCreated {
		t.Fatalf("5x flavor: %d %v", code, out)
	}
	code, out := p.api("POST", "/api/v1/workbenches", toks["bob"], `{"name":"b","image":"PyTorch (CUDA 12)","flavor":"5x"}`)
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(out), "reserved for someone else") {
		t.Fatalf("bob launches 5 of 7 with 3 booked: %d %v, want 409 reserved for someone else", code, out)
	}
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	_, body = p.get(bc, "/workbenches/new")
	waits := mpDoc(t, body).Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.Find(`input[value="5x"]`).Length() == 1
	}).Find(`[data-testid=flavor-waits]`)
	if !strings.Contains(text(waits), "needs 5 GPUs, 3 free") {
		t.Errorf("bob's 5x flavor says %q, want that it waits: 3 free", text(waits))
	}

	// The booking form tells a group member what a group's booking holds.
	dc := p.client()
	p.login(dc, "dave", "dave-password")
	_, body = p.get(dc, "/gpus")
	if hint := text(mpDoc(t, body).Find(`[data-testid=booking-group-hint]`)); !strings.Contains(hint, "work its members started before it keeps running and counts against it") {
		t.Errorf("dave's booking form: group hint %q", hint)
	}
	_, body = p.get(bc, "/gpus")
	if mpDoc(t, body).Find(`[data-testid=booking-group-hint]`).Length() != 0 {
		t.Error("bob, in no group, is told about group bookings")
	}
}

// catalogFree is the catalog's "Free now" of a flavor.
func catalogFree(doc *goquery.Document, flavor string) string {
	return strings.Join(strings.Fields(doc.Find(`[data-testid=flavor-row]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.TrimSpace(s.Find("td").First().Text()) == flavor
	}).Find(`[data-testid=flavor-free]`).Text()), " ")
}
