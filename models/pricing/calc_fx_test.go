package pricing

import (
	"strings"
	"testing"
)

// The shipped USD/CNY rate converts both ways exactly to the micro-unit:
// amount × num / den as a fraction, rounded half away from zero once.
func TestFXConversionExactMicros(t *testing.T) {
	usd := Conversions("USD", nil, DefaultFXRates)["CNY"]
	cny := Conversions("CNY", nil, DefaultFXRates)["USD"]
	for _, c := range []struct {
		name string
		conv Conversion
		in   int64
		want int64
	}{
		{"12 CNY in USD at 7.2", usd, 12_000_000, 1_666_667}, // 1.6666666…
		{"7.2 CNY is 1 USD", usd, 7_200_000, 1_000_000},
		{"18 micro-CNY is 2.5 micro-USD: half rounds up", usd, 18, 3},
		{"9 micro-CNY is 1.25 micro-USD", usd, 9, 1},
		{"3.431 USD in CNY", cny, 3_431_000, 24_703_200},
		{"1 micro-USD", cny, 1, 7},
	} {
		got, ok := c.conv.Convert(c.in)
		if !ok || got != c.want {
			t.Errorf("%s: %d → %d (%v), want %d", c.name, c.in, got, ok, c.want)
		}
	}
	if usd.PortalMicros() != 138_889 || cny.PortalMicros() != 7_200_000 {
		t.Errorf("portal micro-units per unit: %d, %d", usd.PortalMicros(), cny.PortalMicros())
	}
	// Every converted figure shows the rate as it was given, with its date
	// and source.
	if d := usd.Describe(); !strings.HasPrefix(d, "1 USD = 7.2 CNY (2026-09, default: ") {
		t.Errorf("described as %q", d)
	}
}

// An admin's rate replaces the shipped one for that currency only; a
// portal in a third currency gets no USD/CNY conversion from the default.
func TestFXAdminRateWins(t *testing.T) {
	admin := []FXRate{{From: "CNY", To: "USD", Micros: 140_000, AsOf: "2026-11-30", Source: "bank"}}
	conv := Conversions("usd", admin, DefaultFXRates)
	if got, _ := conv["CNY"].Convert(12_000_000); got != 1_680_000 || conv["CNY"].Rate.Default {
		t.Errorf("admin rate not used: %d %+v", got, conv["CNY"])
	}
	if len(Conversions("EUR", nil, DefaultFXRates)) != 0 {
		t.Error("a EUR portal got a conversion from the USD/CNY default")
	}
	// In a USD portal, CNY offers are priced by default (issue 14: they
	// were left out until an admin set a rate).
	priced, missing := PriceOffers([]Offer{{Provider: "Chinese cloud market", Name: "x", GPUModel: "A100", Tier: TierOnDemand, Currency: "CNY", PriceMicros: 12_000_000}},
		Settings{Currency: "USD", FX: Conversions("USD", nil, DefaultFXRates)})
	if len(missing) != 0 || len(priced) != 1 || priced[0].RateMicros != 1_666_667 || !priced[0].Converted() || priced[0].FXMicros != 138_889 {
		t.Errorf("priced %+v missing %v", priced, missing)
	}
}
