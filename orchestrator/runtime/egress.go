package runtime

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// EgressMode says where workbench containers may open connections.
type EgressMode string

const (
	// EgressInternet (the default): public internet addresses only. The
	// host (every one of its addresses), link-local addresses (169.254/16,
	// where clouds serve instance metadata), private and other
	// special-purpose ranges and other workbenches are refused.
	EgressInternet EgressMode = "internet"
	// EgressNone: nothing but the allow-list.
	EgressNone EgressMode = "none"
	// EgressAll: no filtering by the portal at all (the engine's own
	// rules, icc=false among them, still apply).
	EgressAll EgressMode = "all"
)

// EgressModes lists the valid modes, default first.
var EgressModes = []EgressMode{EgressInternet, EgressNone, EgressAll}

// EgressPolicy is the admin's egress setting: a mode plus CIDRs (lab
// services) that are always reachable, whatever the mode refuses.
type EgressPolicy struct {
	Mode  EgressMode
	Allow []netip.Prefix
}

// DefaultEgressPolicy is what an install without a setting gets.
var DefaultEgressPolicy = EgressPolicy{Mode: EgressInternet}

// AllowStrings renders the allow-list as canonical CIDRs.
func (p EgressPolicy) AllowStrings() []string {
	out := make([]string, len(p.Allow))
	for i, a := range p.Allow {
		out[i] = a.String()
	}
	return out
}

// EgressFieldError names the bad field of an egress policy.
type EgressFieldError struct {
	Field   string // "mode" or "allow"
	Message string
}

func (e *EgressFieldError) Error() string { return e.Field + ": " + e.Message }

// ParseEgressPolicy validates a mode ("" means the default) and an
// allow-list given as CIDRs or single IPv4 addresses separated by commas,
// spaces or newlines. Host bits are refused rather than silently masked
// (10.1.2.3/8 is a typo for something); duplicates are dropped.
func ParseEgressPolicy(mode, allow string) (EgressPolicy, error) {
	p := EgressPolicy{Mode: EgressMode(strings.TrimSpace(mode))}
	if p.Mode == "" {
		p.Mode = EgressInternet
	}
	if !slices.Contains(EgressModes, p.Mode) {
		return p, &EgressFieldError{"mode", fmt.Sprintf("%q is not one of internet, none, all", mode)}
	}
	for _, f := range strings.FieldsFunc(allow, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
		pre, err := parseCIDR(f)
		if err != nil {
			return p, &EgressFieldError{"allow", err.Error()}
		}
		if !slices.Contains(p.Allow, pre) {
			p.Allow = append(p.Allow, pre)
		}
	}
	if len(p.Allow) > 64 {
		return p, &EgressFieldError{"allow", "at most 64 entries"}
	}
	return p, nil
}

func parseCIDR(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() {
			return netip.Prefix{}, fmt.Errorf("%q is not an IPv4 address or CIDR such as 10.20.0.0/16", s)
		}
		return netip.PrefixFrom(a, 32), nil
	}
	pre, err := netip.ParsePrefix(s)
	if err != nil || !pre.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("%q is not an IPv4 CIDR such as 10.20.0.0/16", s)
	}
	if pre.Masked() != pre {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set; did you mean %s?", s, pre.Masked())
	}
	if pre.Bits() == 0 {
		return netip.Prefix{}, fmt.Errorf("%q allows everything; choose the mode \"all\" instead", s)
	}
	return pre, nil
}

// nonInternet are the IPv4 ranges that are not the public internet
// (RFC 6890 special-purpose registry, plus multicast and reserved): the
// internet mode refuses them, so a workbench reaches neither the LAN nor
// cloud metadata nor another bridge's containers. The host's own addresses
// are refused separately (they are not forwarded, see egressRules).
var nonInternet = []string{
	"0.0.0.0/8",
	"10.0.0.0/8",
	"100.64.0.0/10",
	"127.0.0.0/8",
	"169.254.0.0/16", // link-local, 169.254.169.254 metadata
	"172.16.0.0/12",
	"192.0.0.0/24",
	"192.0.2.0/24",
	"192.168.0.0/16",
	"198.18.0.0/15",
	"198.51.100.0/24",
	"203.0.113.0/24",
	"224.0.0.0/4",
	"240.0.0.0/4",
}

// NonInternetRanges returns the ranges the internet mode refuses, for
// runtimes that enforce the policy another way (kube: a NetworkPolicy).
func NonInternetRanges() []string { return slices.Clone(nonInternet) }
