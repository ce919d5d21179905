package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A rate an admin scheduled for later is told to members where they choose
// what to run — the launch form and the GPU pool — with its date and the
// rate it replaces (it was shown on /admin/prices only, and a run lasting
// past it was billed at the new rate unannounced). Once in force, the
// notice is gone.
func TestScheduledPriceChangeIsShownToMembers(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	c := p.client()
	p.login(c, "ada", "ada-password")
	for _, page := range []string{"/gpus", "/workbenches/new"} {
		if _, body := p.get(c, page); parseHTML(t, body).Find(tid("price-changes")).Length() != 0 {
			t.Fatalf("%s tells of a price change before any is scheduled", page)
		}
	}
	from := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Minute)
	if err := p.srv.Store.AddPriceRate(ctx, &models.PriceRate{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", Micros: 9_000_000,
		EffectiveFrom: from, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"/gpus", "/workbenches/new"} {
		_, body := p.get(c, page)
		items := parseHTML(t, body).Find(tid("price-changes") + " " + tid("price-change"))
		if items.Length() != 1 {
			t.Fatalf("%s: %d price changes shown, want 1", page, items.Length())
		}
		got := items.Text()
		for _, want := range []string{"GPU NVIDIA H100 80GB HBM3", "9.00 USD", "GPU-hour", from.Format("2006-01-02"), "now 3.00 USD"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the change reads %q, without %q", page, got, want)
			}
		}
	}
	// The admin calls it off by entering the rate in force for the same
	// time (the version entered last applies): nothing changes, and
	// nothing is announced any more.
	if err := p.srv.Store.AddPriceRate(ctx, &models.PriceRate{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", Micros: 3_000_000,
		EffectiveFrom: from, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"/gpus", "/workbenches/new"} {
		if _, body := p.get(c, page); parseHTML(t, body).Find(tid("price-changes")).Length() != 0 {
			t.Errorf("%s still announces a change that was called off: %q", page, parseHTML(t, body).Find(tid("price-changes")).Text())
		}
	}
	// A later real change is the one told, even behind a no-op one.
	later := from.Add(48 * time.Hour)
	if err := p.srv.Store.AddPriceRate(ctx, &models.PriceRate{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", Micros: 4_000_000,
		EffectiveFrom: later, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	_, body := p.get(c, "/gpus")
	if got := parseHTML(t, body).Find(tid("price-change")).Text(); !strings.Contains(got, "4.00 USD") || !strings.Contains(got, later.Format("2006-01-02")) {
		t.Errorf("the change after a called-off one reads %q, want 4.00 USD from %s", got, later.Format("2006-01-02"))
	}
}

// A change inside a minute is told to the second: "from 02:13" for a rate
// in force at 02:13:32 read, at 02:13:10, as already in force.
func TestScheduledPriceChangeToTheSecond(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	c := p.client()
	p.login(c, "ada", "ada-password")
	from := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Minute).Add(32 * time.Second)
	if err := p.srv.Store.AddPriceRate(ctx, &models.PriceRate{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", Micros: 9_000_000,
		EffectiveFrom: from, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	_, body := p.get(c, "/gpus")
	if got := parseHTML(t, body).Find(tid("price-change")).Text(); !strings.Contains(got, from.Format("2006-01-02 15:04:05 UTC")) {
		t.Errorf("the change reads %q, want its time to the second", got)
	}
}

// A new preemptible discount scheduled for later is told as a rate is: a
// preemptible run lasting past it was billed at the new discount
// unannounced. Told once, not per GPU model whose discounted rate it
// changes.
func TestScheduledDiscountChangeIsShownToMembers(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	c := p.client()
	p.login(c, "ada", "ada-password")
	from := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Minute)
	if err := p.srv.Store.AddPriceTier(ctx, &models.PriceTier{Tier: "preemptible", DiscountPct: 55, EffectiveFrom: from, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"/gpus", "/workbenches/new"} {
		_, body := p.get(c, page)
		items := parseHTML(t, body).Find(tid("price-changes") + " " + tid("price-change"))
		if items.Length() != 1 {
			t.Fatalf("%s: %d price changes shown, want the discount's 1: %q", page, items.Length(), items.Text())
		}
		got := items.Text()
		for _, want := range []string{"Preemptible runs: 55% off the GPU rates", from.Format("2006-01-02"), "% off)"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the change reads %q, without %q", page, got, want)
			}
		}
	}
}

// A price change's time is worded for its reader, as the calculator words
// the change it prices: in Chinese "2026年12月9日 14:37 UTC" with the
// reader's zone beside it (it said "2026-12-09 14:37 UTC" in a Chinese
// page); to the second where it falls inside a minute.
func TestScheduledPriceChangeInTheReadersLanguageAndZone(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("lin", "lin-password-1")
	if res := p.postForm(en, "/settings/time-zone", url.Values{"time_zone": {"Asia/Shanghai"}}); res.StatusCode >= 400 {
		t.Fatalf("time zone: %d", res.StatusCode)
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	gpuAt := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Minute)
	cpuAt := gpuAt.Add(time.Hour + 32*time.Second)
	for _, r := range []models.PriceRate{
		{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", Micros: 9_000_000, EffectiveFrom: gpuAt, CreatedBy: "admin"},
		{Resource: "cpu", Micros: 90_000, EffectiveFrom: cpuAt, CreatedBy: "admin"},
	} {
		if err := p.srv.Store.AddPriceRate(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	zhDay := func(t time.Time) string { return fmt.Sprintf("%d年%d月%d日", t.Year(), int(t.Month()), t.Day()) }
	beside := func(t time.Time, english bool, clock string) string {
		l := t.In(shanghai)
		local := l.Format(clock)
		if l.YearDay() != t.YearDay() {
			local = l.Format("01-02 " + clock)
			if !english {
				local = fmt.Sprintf("%d月%d日 %s", int(l.Month()), l.Day(), l.Format(clock))
			}
		}
		if english {
			return " (" + local + " UTC+8)"
		}
		return "（" + local + " UTC+8）"
	}
	for _, c := range []struct {
		client  *http.Client
		english bool
		want    []string
	}{
		{en, true, []string{gpuAt.Format("2006-01-02 15:04 UTC") + beside(gpuAt, true, "15:04"), cpuAt.Format("2006-01-02 15:04:05 UTC") + beside(cpuAt, true, "15:04")}},
		{zh, false, []string{zhDay(gpuAt) + " " + gpuAt.Format("15:04") + " UTC" + beside(gpuAt, false, "15:04"),
			zhDay(cpuAt) + " " + cpuAt.Format("15:04:05") + " UTC" + beside(cpuAt, false, "15:04")}},
	} {
		_, body := p.get(c.client, "/gpus")
		got := parseHTML(t, body).Find(tid("price-changes")).Text()
		for _, want := range c.want {
			if !strings.Contains(got, want) {
				t.Errorf("english=%v: the changes read %q, without %q", c.english, got, want)
			}
		}
		if !c.english && strings.Contains(got, gpuAt.Format("2006-01-02")) {
			t.Errorf("the Chinese changes keep the English date: %q", got)
		}
	}
}
