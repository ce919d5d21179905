package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The launch form shows each flavor's price per hour before launching,
// computed by the billing code from the seeded default rates:
// 1 × H100 at 3.00 + 8 cores at 0.02 + 64 GiB at 0.005 = 3.48 per hour.
func TestLaunchPageShowsPricePerHour(t *testing.T) {
	p := newPortal(t)
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "alice", Password: "alice-password"}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	res, body := p.get(c, "/workbenches/new")
	if res.StatusCode != 200 {
		t.Fatalf("launch page: %d", res.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	prices := map[string]string{}
	doc.Find(`[data-testid=flavor-choice]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Find(`input[name=flavor]`).Attr("value")
		prices[name] = strings.TrimSpace(s.Find(`[data-testid=flavor-price]`).Text())
	})
	if got := prices["1x H100 80GB HBM3"]; got != "3.48 USD/h" {
		t.Errorf("1x H100 price %q, want 3.48 USD/h (all: %v)", got, prices)
	}
	if got := prices["CPU small"]; got != "0.08 USD/h" { // 2 × 0.02 + 8 × 0.005
		t.Errorf("CPU small price %q, want 0.08 USD/h", got)
	}
}
