package i18n

import (
	"regexp"
	"strings"

	"golang.org/x/text/currency"
)

// Amount writes a formatted decimal ("1234.57", already rounded as the
// caller means it) with its ISO currency code in this locale's style: the
// portal's long-standing "1234.57 USD" in English; in Chinese the symbol
// first and thousands grouped, as Chinese prices are written ("¥1,234.57",
// "$12.35", "1,234.57 EUR" for a currency without a symbol of its own).
// The pages' Money (templates) and the amounts inside a reason (Reason)
// both print through it, so one page cannot write money two ways.
func (l Locale) Amount(dec, code string) string {
	if l.Tag == English || l.printer == nil {
		if code == "" {
			return dec
		}
		return dec + " " + code
	}
	sign := ""
	if strings.HasPrefix(dec, "-") {
		sign, dec = "-", dec[1:]
	}
	dec = groupThousands(dec)
	switch code {
	case "CNY":
		return sign + "¥" + dec
	case "USD":
		return sign + "$" + dec
	case "":
		return sign + dec
	}
	return sign + dec + " " + code
}

// groupThousands puts commas between thousands of a decimal's integer
// part: "1234567.5" → "1,234,567.5".
func groupThousands(dec string) string {
	intPart, frac, hasFrac := strings.Cut(dec, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

// reasonMoney is an amount as the models write it into a reason
// (models.moneyRounded, moneyExact): "8.94 USD", "0.005159 CNY", "0.003
// USD" for something left under a cent; "< 0.01 USD" only in reasons
// stored before session 57, which wrote such a sliver so.
var reasonMoney = regexp.MustCompile(`^([<>] )?(-?\d+(?:\.\d+)?) ([A-Z]{3})$`)

// money rewrites a value of a reason that is an amount of money in this
// locale's style ("8.94 USD" → "$8.94", "0.003 USD" → "$0.003"), its
// digits as written: the models rounded what is left down and what is owed
// up, and that stays. ok is false for any other value; a code must be a
// currency of ISO 4217, so "2 GPU" is no amount.
func (l Locale) money(v string) (string, bool) {
	m := reasonMoney.FindStringSubmatch(v)
	if m == nil {
		return "", false
	}
	if _, err := currency.ParseISO(m[3]); err != nil {
		return "", false
	}
	return m[1] + l.Amount(m[2], m[3]), true
}
