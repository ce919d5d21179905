package models

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"workbench/models/pricing"
)

// Every currency the shipped cloud catalog prices in has a shipped default
// rate to and from every other currency of the catalog, so that a portal in
// any of them shows all the seeded offers without setup (issue 14: the CNY
// offers were hidden in a USD portal). A seed row in a new currency fails
// here until DefaultFXRates gets a rate for it, with its date and source.
func TestSeedCurrenciesHaveDefaultRates(t *testing.T) {
	rows, err := ParseCloudPriceCSV(bytes.NewReader(cloudPriceSeed))
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, r := range rows {
		set[r.Currency] = true
	}
	var curs []string
	for c := range set {
		curs = append(curs, c)
	}
	sort.Strings(curs)
	if len(curs) < 2 {
		t.Fatalf("seed currencies %v: the catalog should mix currencies (CNY and USD)", curs)
	}
	for _, r := range pricing.DefaultFXRates {
		if r.AsOf == "" || r.Source == "" || !r.Default {
			t.Errorf("default rate %s/%s has no date or source: %+v", r.From, r.To, r)
		}
	}
	for _, portal := range curs {
		conv := pricing.Conversions(portal, nil, pricing.DefaultFXRates)
		for _, r := range rows {
			if r.Currency == portal {
				continue
			}
			c, ok := conv[r.Currency]
			if !ok {
				t.Errorf("a %s portal has no default rate for %s (%s %s)", portal, r.Currency, r.Provider, r.Offer)
				continue
			}
			got, ok := c.Convert(r.PriceMicros)
			if !ok || got <= 0 {
				t.Errorf("%s %s: %d micro-%s → %d micro-%s (%v)", r.Provider, r.Offer, r.PriceMicros, r.Currency, got, portal, ok)
			}
			// Shown beside the converted figure: the rate with its date
			// and source.
			if d := c.Describe(); !strings.Contains(d, c.Rate.AsOf) || !strings.Contains(d, c.Rate.Source) {
				t.Errorf("rate described as %q", d)
			}
		}
	}
	// Exact to the micro-unit both ways, rounded half away from zero once:
	// the seed's 12 CNY on-demand offer in a USD portal, and AWS's 3.431
	// USD in a CNY one.
	usd := pricing.Conversions("USD", nil, pricing.DefaultFXRates)["CNY"]
	cny := pricing.Conversions("CNY", nil, pricing.DefaultFXRates)["USD"]
	for _, c := range []struct {
		conv     pricing.Conversion
		in, want int64
	}{
		{usd, 12_000_000, 1_666_667},
		{usd, 20_830_000, 2_893_056}, // 20.83 / 7.2 = 2.8930555…
		{usd, 800_000, 111_111},
		{cny, 3_431_000, 24_703_200},
		{cny, 1, 7},
	} {
		if got, ok := c.conv.Convert(c.in); !ok || got != c.want {
			t.Errorf("%d micro-%s → %d, want %d", c.in, c.conv.Currency, got, c.want)
		}
	}
}
