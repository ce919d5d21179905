package pricing

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
	"unicode"
)

// Cloud price tiers (SPEC §7). A catalog row may carry another commitment
// ("reserved-weekly" from the seed research); it is shown as listed and
// never derived.
const (
	TierOnDemand   = "on-demand"
	TierSpot       = "spot"
	TierReserved1y = "reserved-1y"
	TierReserved3y = "reserved-3y"
)

// DerivedTiers are the tiers estimated from on-demand where a provider
// lists none, in display order.
var DerivedTiers = []string{TierSpot, TierReserved1y, TierReserved3y}

// DefaultDiscountsBps are the discounts off on-demand (basis points) used to
// derive a missing tier until an admin sets others: 35% for one year and
// 55% for three years (the public TCO model cited in the data README; the
// seed research saw 30–50% for 1–3 year terms) and 60% for spot (the seed's
// A100 at 12 on demand vs 4 spot is 67% off; GCP's H100 spot is 40% off).
var DefaultDiscountsBps = map[string]int64{TierSpot: 6000, TierReserved1y: 3500, TierReserved3y: 5500}

// Offer is one cloud price: a catalog row, or a tier derived from one.
type Offer struct {
	ID          int64 // catalog row; for a derived tier, the on-demand row it came from
	Provider    string
	Name        string // the offer: instance type or product
	GPUModel    string
	GPUsInOffer int
	Tier        string
	Currency    string
	PriceMicros int64 // per GPU-hour, in Currency
	AsOf        string
	Source      string
	Note        string
	// Derived marks an estimate: the on-demand price less DiscountBps.
	Derived     bool
	DiscountBps int64
}

// Label names the offer in tables and the chart legend.
func (o Offer) Label() string {
	s := o.Provider + " " + o.Name + " (" + o.Tier
	if o.Derived {
		s += ", estimate"
	}
	return s + ")"
}

// Settings are the admin's calculator settings.
type Settings struct {
	Currency string // the portal's currency (ISO code)
	// DiscountsBps derive missing tiers (basis points off on-demand).
	DiscountsBps map[string]int64
	// FX converts a price in another currency (keyed by that currency)
	// to Currency; see Conversions.
	FX map[string]Conversion
}

// Family reduces a GPU model name to its family so that the portal's NVML
// names ("NVIDIA H100 80GB HBM3") meet the catalog's ("H100-80GB"): the
// first token with letters and digits that is not a memory size, with
// vendor and brand words skipped ("RTX 4090" keeps its brand).
func Family(model string) string {
	toks := strings.FieldsFunc(strings.ToUpper(model), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, t := range toks {
		switch t {
		case "NVIDIA", "TESLA", "GEFORCE", "QUADRO", "AMD", "INSTINCT", "INTEL":
			continue
		case "RTX", "GTX":
			if i+1 < len(toks) {
				return t + " " + toks[i+1]
			}
		}
		if strings.IndexFunc(t, unicode.IsLetter) >= 0 && strings.IndexFunc(t, unicode.IsDigit) >= 0 &&
			!strings.HasSuffix(t, "GB") && !strings.HasPrefix(t, "HBM") && !strings.HasPrefix(t, "SXM") {
			return t
		}
	}
	return strings.Join(toks, " ")
}

// SameFamily reports whether two model names are the same GPU family.
func SameFamily(a, b string) bool {
	fa := Family(a)
	return fa != "" && fa == Family(b)
}

// Derive returns offers plus, for every on-demand offer, the tiers its
// provider does not list for that GPU family, priced at the discount and
// marked Derived (an estimate).
func Derive(offers []Offer, discountsBps map[string]int64) []Offer {
	listed := map[string]bool{}
	key := func(o Offer, tier string) string {
		return strings.ToLower(o.Provider) + "|" + Family(o.GPUModel) + "|" + tier
	}
	for _, o := range offers {
		listed[key(o, o.Tier)] = true
	}
	out := append([]Offer(nil), offers...)
	for _, o := range offers {
		if o.Tier != TierOnDemand || o.Derived {
			continue
		}
		for _, tier := range DerivedTiers {
			bps, ok := discountsBps[tier]
			if !ok {
				bps = DefaultDiscountsBps[tier]
			}
			if listed[key(o, tier)] || bps < 0 || bps >= 10000 {
				continue
			}
			d := o
			d.Tier, d.Derived, d.DiscountBps = tier, true, bps
			d.PriceMicros, _ = mulDiv(o.PriceMicros, 10000-bps, 10000)
			d.Note = fmt.Sprintf("estimate: on-demand less %s%%", FormatNumber(big.NewRat(bps, 100), 2))
			out = append(out, d)
		}
	}
	return out
}

// PricedOffer is an offer with its price in the portal currency.
type PricedOffer struct {
	Offer
	RateMicros int64 // per GPU-hour, in the portal currency
	FXMicros   int64 // the exchange rate used (portal micro-units per unit); 0 when no conversion
	FX         Conversion
}

// Converted reports whether the price was converted from another currency.
func (p PricedOffer) Converted() bool { return p.FX.Den != 0 }

// PriceOffers converts every offer to the portal currency. Offers in a
// currency without an exchange rate cannot be compared: they are left out
// and counted by currency in missing, so the page can say why.
func PriceOffers(offers []Offer, s Settings) (priced []PricedOffer, missing map[string]int) {
	missing = map[string]int{}
	for _, o := range offers {
		p := PricedOffer{Offer: o, RateMicros: o.PriceMicros}
		if !strings.EqualFold(o.Currency, s.Currency) {
			fx, ok := s.FX[strings.ToUpper(o.Currency)]
			if !ok {
				missing[strings.ToUpper(o.Currency)]++
				continue
			}
			rate, ok := fx.Convert(o.PriceMicros)
			if !ok {
				missing[strings.ToUpper(o.Currency)]++
				continue
			}
			p.RateMicros, p.FXMicros, p.FX = rate, fx.PortalMicros(), fx
		}
		priced = append(priced, p)
	}
	return priced, missing
}

// ForModel keeps the offers of model's GPU family, cheapest first.
func ForModel(priced []PricedOffer, model string) []PricedOffer {
	var out []PricedOffer
	for _, p := range priced {
		if SameFamily(p.GPUModel, model) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return lessOffer(out[i], out[j], out[i].RateMicros, out[j].RateMicros) })
	return out
}

func lessOffer(a, b PricedOffer, ca, cb int64) bool {
	if ca != cb {
		return ca < cb
	}
	if a.Derived != b.Derived {
		return !a.Derived // a listed price before an estimate
	}
	if a.Provider != b.Provider {
		return a.Provider < b.Provider
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Tier < b.Tier
}

// Comparison is one cloud offer priced for an estimate.
type Comparison struct {
	PricedOffer
	Cost int64 // the estimate's GPUs for its duration at this offer
	// VsHereBps is (here − offer) / offer in basis points: negative means
	// running here saves that share, positive that here costs that much
	// more. VsHereOK is false when the offer's cost is 0.
	VsHereBps int64
	VsHereOK  bool
}

// Compare prices gpuCount GPUs for gpuSeconds (GPU-seconds in total) at each
// offer of model's family and compares with here (this portal's compute
// cost for the same work; cloud instance prices include vCPU and memory).
// The result is sorted by cost, cheapest first.
func Compare(priced []PricedOffer, model string, gpuSeconds, here int64) []Comparison {
	var out []Comparison
	for _, p := range ForModel(priced, model) {
		cost, ok := mulDiv(p.RateMicros, gpuSeconds, 3600)
		if !ok {
			continue
		}
		c := Comparison{PricedOffer: p, Cost: cost}
		if cost > 0 {
			c.VsHereBps, c.VsHereOK = mulDiv(here-cost, 10000, cost)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return lessOffer(out[i].PricedOffer, out[j].PricedOffer, out[i].Cost, out[j].Cost)
	})
	return out
}

// FormatBps renders basis points as a percentage with one decimal ("-35.2%").
func FormatBps(bps int64) string {
	return FormatNumber(big.NewRat(bps, 100), 1) + "%"
}
