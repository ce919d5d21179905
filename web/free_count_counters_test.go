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

// The launch form's free count of a MIG flavor read "7 块空闲" in Chinese:
// 块 counts whole GPUs (cards); MIG instances take 个. Whole-GPU flavors
// keep 块; English says "7 free" for both.
func TestLaunchFormFreeCountsUseTheUnitsCounter(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*7" })
	tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	const whole, mig = "1x H100 80GB HBM3", "1x MIG 1g.10gb (H100 80GB HBM3)"
	zh, en := p.readersSignedIn("alice", "alice-password")
	freeOn := func(c *http.Client, name string) string {
		_, page := p.get(c, "/workbenches/new")
		card := mpDoc(t, page).Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Find(`input[value="`+name+`"]`).Length() == 1
		})
		return strings.Join(strings.Fields(card.Find(`[data-testid=free-gpus]`).Text()), " ")
	}
	if got := freeOn(zh, mig); got != "7 个空闲" {
		t.Errorf("zh-CN, MIG flavor, none booked: %q, want %q", got, "7 个空闲")
	}
	now := time.Now().UTC()
	// bob books one instance: alice sees it counted apart.
	body := fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","unit_kind":"mig","mig_profile":"1g.10gb","units":1,"starts_at":%q,"ends_at":%q}`,
		now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	if code, out := p.api("POST", "/api/v1/reservations", bob, body); code != http.StatusCreated {
		t.Fatalf("bob books an instance: %d %v", code, out)
	}
	for _, c := range []struct {
		client    *http.Client
		lang      string
		gpus, mig string
	}{
		{zh, "zh-CN", "7 块空闲", "6 个空闲 · 另有 1 个此刻为他人预留"},
		{en, "en", "7 free", "6 free · 1 reserved for others now"},
	} {
		if got := freeOn(c.client, whole); got != c.gpus {
			t.Errorf("%s, whole-GPU flavor: %q, want %q", c.lang, got, c.gpus)
		}
		if got := freeOn(c.client, mig); got != c.mig {
			t.Errorf("%s, MIG flavor: %q, want %q", c.lang, got, c.mig)
		}
	}
}
