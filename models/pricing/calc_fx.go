package pricing

import (
	"fmt"
	"math/big"
	"strings"
)

// FXRate is one exchange rate: one unit of From is worth Micros/1e6 of To,
// seen on AsOf at Source. A rate converts both ways (the inverse is exact
// as a fraction), so one shipped USD/CNY rate serves a USD portal showing
// CNY offers and a CNY portal showing USD ones.
type FXRate struct {
	From, To string
	Micros   int64 // micro-units of To per one From
	AsOf     string
	Source   string
	// Default marks a rate shipped with the portal, in force until an
	// admin sets one for the currency.
	Default bool
}

// DefaultFXRates ship with the portal so that offers in the other main
// currency appear without setup. 7.2 CNY per USD is the middle of what the
// 2026 sources of the shipped cloud price list imply (7.1–7.25); an admin
// replaces it on the cloud prices page.
var DefaultFXRates = []FXRate{{
	From: "USD", To: "CNY", Micros: 7_200_000, AsOf: "2026-09", Default: true,
	Source: "default: implied by the 2026 prices in the shipped cloud catalog (7.1–7.25 CNY per USD)",
}}

// Conversion is a rate oriented towards the portal currency: an amount in
// Currency times Num/Den is the amount in the portal currency.
type Conversion struct {
	Currency string
	Num, Den int64
	Rate     FXRate // as entered, for display with its date and source
}

// PortalMicros is the portal-currency micro-units one unit of Currency is
// worth, rounded to the micro-unit (for display and the API).
func (c Conversion) PortalMicros() int64 {
	v, _ := mulDiv(1_000_000, c.Num, c.Den)
	return v
}

// Convert converts micro-units of Currency to the portal currency, exactly
// rounded half away from zero to the micro-unit.
func (c Conversion) Convert(micros int64) (int64, bool) { return mulDiv(micros, c.Num, c.Den) }

// Describe words the rate as the person who set it wrote it, with its date
// and source: "1 USD = 7.2 CNY (2026-09, default: …)".
func (c Conversion) Describe() string {
	s := fmt.Sprintf("1 %s = %s %s", c.Rate.From, FormatNumber(big.NewRat(c.Rate.Micros, 1_000_000), 6), c.Rate.To)
	meta := []string{}
	if c.Rate.AsOf != "" {
		meta = append(meta, c.Rate.AsOf)
	}
	if c.Rate.Source != "" {
		meta = append(meta, c.Rate.Source)
	}
	if len(meta) > 0 {
		s += " (" + strings.Join(meta, ", ") + ")"
	}
	return s
}

// Conversions orients rates towards portal: for each other currency, an
// admin's rate (From = that currency, To = portal) wins over a shipped one;
// a rate the other way round is used inverted.
func Conversions(portal string, admin, defaults []FXRate) map[string]Conversion {
	portal = strings.ToUpper(portal)
	out := map[string]Conversion{}
	add := func(r FXRate) {
		if r.Micros <= 0 {
			return
		}
		from, to := strings.ToUpper(r.From), strings.ToUpper(r.To)
		switch {
		case to == portal && from != portal:
			out[from] = Conversion{Currency: from, Num: r.Micros, Den: 1_000_000, Rate: r}
		case from == portal && to != portal:
			out[to] = Conversion{Currency: to, Num: 1_000_000, Den: r.Micros, Rate: r}
		}
	}
	for _, r := range defaults {
		add(r)
	}
	for _, r := range admin { // later wins
		add(r)
	}
	return out
}
