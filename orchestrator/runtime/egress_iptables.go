package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ErrFirewallUnavailable means egress rules cannot be enforced on this
// host (no iptables, not root, the engine keeps no iptables rules or runs
// on another machine). The error's text says which; the portal keeps
// working and says plainly that the policy is not enforced.
var ErrFirewallUnavailable = errors.New("egress policy not enforced")

// Firewall enforces an EgressPolicy for one bridge network with the host's
// iptables, the same tool (and backend, nft or legacy) the engine uses.
//
// A workbench's packets take one of two paths through netfilter:
//
//   - to any address of the host itself (the bridge's gateway, the host's
//     LAN address, docker0's address…) they are delivered locally and pass
//     the INPUT chain, never FORWARD;
//   - to anything else they are routed and pass FORWARD, whose first jump
//     is Docker's DOCKER-USER chain, kept for rules like these.
//
// So the portal owns two chains per install, WB-<install>-FWD (jumped to
// from DOCKER-USER) and WB-<install>-IN (from INPUT), each entered only for
// packets arriving on the network's bridge interface. The INPUT one first
// lets replies of established connections through: the portal opens
// connections to Jupyter in the containers, and their answers come back
// that way. See egressRules for why the forward one does not.
//
// Chain contents are replaced atomically with iptables-restore --noflush
// (no moment without rules); the jumps are checked and put first in their
// parent chain. Nothing else is touched: no flushing of shared chains, no
// policy changes.
type Firewall struct {
	log *slog.Logger

	mu      sync.Mutex
	iptBin  string // e.g. iptables or iptables-legacy; "" until detected
	restore string

	// failStep, set by tests, is asked before each iptables call; an
	// error it returns stands for that call failing (a busy nft backend
	// answers "Resource temporarily unavailable" under concurrent
	// changes).
	failStep func(args []string) error

	// applied holds the installs whose rules this process has put in
	// place: a jump missing at a later Apply was taken away outside the
	// portal (`workbench egress remove`, an iptables flush), which is
	// worth a warning, not the silent repair it was.
	applied map[string]bool
}

// NewFirewall returns a Firewall; it finds iptables on first use.
func NewFirewall(log *slog.Logger) *Firewall {
	if log == nil {
		log = slog.Default()
	}
	return &Firewall{log: log}
}

// EgressChains returns the names of the portal's chains for one install.
// iptables limits chain names to 28 characters; an id that does not fit
// (or has odd characters) is replaced by a hash of it.
func EgressChains(installID string) (fwd, in string) {
	key := installID
	if len(key) > 16 || !chainSafe.MatchString(key) {
		sum := sha256.Sum256([]byte(installID))
		key = "h" + hex.EncodeToString(sum[:])[:12]
	}
	return chainPrefix + key + "-FWD", chainPrefix + key + "-IN"
}

const chainPrefix = "WB-"

var chainSafe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// parents are the shared chains the portal jumps from: forwarded traffic
// in DOCKER-USER, traffic to the host in INPUT.
const (
	parentForward = "DOCKER-USER"
	parentInput   = "INPUT"
)

// egressRules renders the iptables-restore input that (re)defines both
// chains for policy p. Order matters: replies (host chain only), then the
// allow-list, then what the mode refuses.
func egressRules(fwd, in string, p EgressPolicy) string {
	var b strings.Builder
	b.WriteString("*filter\n")
	fmt.Fprintf(&b, ":%s - [0:0]\n:%s - [0:0]\n", fwd, in)
	const reject = "-j REJECT --reject-with icmp-admin-prohibited"
	// Only the host chain lets replies through by state: the host opens
	// connections into the containers (the portal to Jupyter), nothing
	// outside does (no published ports), so every forwarded packet from
	// the bridge belongs to a connection a container opened and is judged
	// by its destination alone. That also cuts, at its next packet, a
	// connection opened in the instant Docker 20.10 deletes and re-inserts
	// FORWARD's jump to DOCKER-USER (it does so whenever any network is
	// created on the host), which a state rule would keep alive.
	fmt.Fprintf(&b, "-A %s -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN\n", in)
	for _, chain := range []string{fwd, in} {
		if p.Mode == EgressAll {
			fmt.Fprintf(&b, "-A %s -j RETURN\n", chain)
			continue
		}
		for _, a := range p.Allow {
			fmt.Fprintf(&b, "-A %s -d %s -j RETURN\n", chain, a)
		}
		if chain == fwd && p.Mode == EgressInternet {
			for _, r := range nonInternet {
				fmt.Fprintf(&b, "-A %s -d %s %s\n", chain, r, reject)
			}
			fmt.Fprintf(&b, "-A %s -j RETURN\n", chain)
			continue
		}
		// none (both chains), and internet for the host itself.
		fmt.Fprintf(&b, "-A %s %s\n", chain, reject)
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// Apply installs (or replaces) policy p for the network whose bridge
// interface is bridge, under installID's chains. It is idempotent; jumps
// left over from an earlier bridge of the same install are removed, and so
// are chains of installs whose bridge no longer exists. The error wraps
// ErrFirewallUnavailable when this host cannot enforce anything.
func (f *Firewall) Apply(ctx context.Context, installID, bridge string, p EgressPolicy) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.detect(ctx); err != nil {
		return err
	}
	if _, err := net.InterfaceByName(bridge); err != nil {
		return fmt.Errorf("%w: the network's bridge %s is not on this host (is the engine remote, or the portal outside the host's network namespace?)", ErrFirewallUnavailable, bridge)
	}
	fwd, in := EgressChains(installID)
	if err := f.runRestore(ctx, egressRules(fwd, in, p)); err != nil {
		return err
	}
	var repaired []string
	for _, j := range []struct{ parent, chain string }{{parentForward, fwd}, {parentInput, in}} {
		fixed, err := f.ensureJump(ctx, j.parent, j.chain, bridge)
		if err != nil {
			return err
		}
		if fixed {
			repaired = append(repaired, j.parent+" -j "+j.chain)
		}
	}
	if len(repaired) > 0 && f.applied[installID] {
		f.log.Warn("egress rules were changed outside the portal (a jump to them was missing or moved); put back", "install", installID, "jumps", repaired)
	}
	if f.applied == nil {
		f.applied = map[string]bool{}
	}
	f.applied[installID] = true
	f.sweep(ctx, installID)
	return nil
}

// Check reports whether this host can enforce rules at all (iptables with
// the engine's chains, and the right to change them).
func (f *Firewall) Check(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.detect(ctx)
}

// Remove deletes installID's chains and the jumps to them; missing ones are
// fine. Used when the install's network goes away.
func (f *Firewall) Remove(ctx context.Context, installID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.detect(ctx); err != nil {
		return err
	}
	fwd, in := EgressChains(installID)
	delete(f.applied, installID) // its own removal: the next Apply is a first one
	return f.removeChains(ctx, fwd, in)
}

// removeChains removes the input chain and its jumps first, and the
// forward chain only once that worked: the sweep finds an install by its
// remaining jumps, so a removal that still fails half way after its tries
// (removeChain) is finished by the next sweep instead of leaving rules no
// jump points the sweep to.
func (f *Firewall) removeChains(ctx context.Context, fwd, in string) error {
	for _, j := range []struct{ parent, chain string }{{parentInput, in}, {parentForward, fwd}} {
		if err := f.removeChain(ctx, j.parent, j.chain); err != nil {
			return err
		}
	}
	return nil
}

// removeAttempts bounds removeChain's tries. A try fails when another
// portal removing the same chain took a step of its own (a jump, the
// flush, the chain) or when the nft backend refused a change made at the
// same moment as another; a few fresh tries see the removal through.
const removeAttempts = 4

// removeChain removes chain and parent's jumps to it. A try that failed
// (see removeAttempts) is tried again on a fresh listing, rather than
// leaving the rest of the removal — the forward chain, after the input
// chain — to the next sweep.
func (f *Firewall) removeChain(ctx context.Context, parent, chain string) error {
	var errs []error
	for range removeAttempts {
		errs = f.tryRemoveChain(ctx, parent, chain)
		if len(errs) == 0 || f.chainGone(ctx, parent, chain) {
			return nil
		}
	}
	return errors.Join(errs...)
}

// tryRemoveChain is one try of removeChain: every jump it lists, the
// flush, the chain.
func (f *Firewall) tryRemoveChain(ctx context.Context, parent, chain string) []error {
	var errs []error
	jumps, err := f.jumps(ctx, parent, chain)
	if err != nil {
		errs = append(errs, err)
	}
	for _, rule := range jumps {
		if _, err := f.ipt(ctx, append([]string{"-D", parent}, rule...)...); err != nil {
			errs = append(errs, err)
		}
	}
	if f.chainExists(ctx, chain) {
		if _, err := f.ipt(ctx, "-F", chain); err != nil {
			errs = append(errs, err)
		}
		if _, err := f.ipt(ctx, "-X", chain); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// chainGone reports whether chain and every jump to it from parent are
// gone: when two portals sweep the same vanished install at once, each may
// find a rule the other just deleted, and the removal is still done.
func (f *Firewall) chainGone(ctx context.Context, parent, chain string) bool {
	left, err := f.jumps(ctx, parent, chain)
	return err == nil && len(left) == 0 && !f.chainExists(ctx, chain)
}

// ensureJump makes "-i bridge -j chain" come before every rule of parent
// but other portal installs' jumps (which match other bridges), and removes
// any other jump to chain (an earlier bridge of this install). A jump
// already in place is left alone, so re-applying opens no gap.
func (f *Firewall) ensureJump(ctx context.Context, parent, chain, bridge string) (repaired bool, err error) {
	rules, err := f.rules(ctx, parent)
	if err != nil {
		return false, err
	}
	want := []string{"-i", bridge, "-j", chain}
	pos, count := -1, 0
	var stale [][]string
	for i, r := range rules {
		if !jumpsTo(r, chain) {
			continue
		}
		if slicesEqual(r, want) {
			count++
			if pos < 0 {
				pos = i
			}
		} else {
			stale = append(stale, r)
		}
	}
	inPlace := count == 1
	for i := 0; inPlace && i < pos; i++ {
		inPlace = isPortalJump(rules[i])
	}
	if !inPlace {
		for i := 0; i < count; i++ {
			if _, err := f.ipt(ctx, append([]string{"-D", parent}, want...)...); err != nil {
				return false, err
			}
		}
		if _, err := f.ipt(ctx, append([]string{"-I", parent, "1"}, want...)...); err != nil {
			return false, err
		}
	}
	for _, r := range stale {
		if _, err := f.ipt(ctx, append([]string{"-D", parent}, r...)...); err != nil {
			return false, err
		}
	}
	return !inPlace, nil
}

func jumpsTo(rule []string, chain string) bool {
	n := len(rule)
	return n >= 2 && rule[n-2] == "-j" && rule[n-1] == chain
}

// isPortalJump: "-i <bridge> -j WB-…", a jump of some portal install.
func isPortalJump(rule []string) bool {
	return len(rule) == 4 && rule[0] == "-i" && rule[2] == "-j" && strings.HasPrefix(rule[3], chainPrefix)
}

// jumps returns the rule specs (after "-A parent") in parent that jump to chain.
func (f *Firewall) jumps(ctx context.Context, parent, chain string) ([][]string, error) {
	rules, err := f.rules(ctx, parent)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, r := range rules {
		if jumpsTo(r, chain) {
			out = append(out, r)
		}
	}
	return out, nil
}

// rules lists parent's rules as fields after "-A parent".
func (f *Firewall) rules(ctx context.Context, parent string) ([][]string, error) {
	out, err := f.ipt(ctx, "-S", parent)
	if err != nil {
		return nil, err
	}
	var rules [][]string
	for _, line := range strings.Split(out, "\n") {
		fs := strings.Fields(line)
		if len(fs) > 2 && fs[0] == "-A" && fs[1] == parent {
			rules = append(rules, fs[2:])
		}
	}
	return rules, nil
}

func (f *Firewall) chainExists(ctx context.Context, chain string) bool {
	_, err := f.ipt(ctx, "-S", chain)
	return err == nil
}

// sweep removes the chains of other installs whose every jump (from
// DOCKER-USER or INPUT) names a bridge that no longer exists: their network
// was deleted (by an admin, a test's cleanup) without the portal. Chains
// without any jump are left alone, as another portal may be between
// creating one and jumping to it.
func (f *Firewall) sweep(ctx context.Context, self string) {
	out, err := f.ipt(ctx, "-S")
	if err != nil {
		return
	}
	ownFwd, _ := EgressChains(self)
	own := strings.TrimSuffix(ownFwd, "-FWD")
	bridges := map[string][]string{} // an install's chain name stem ("WB-…") → bridges jumping to its chains
	for _, line := range strings.Split(out, "\n") {
		fs := strings.Fields(line)
		if len(fs) != 6 || fs[0] != "-A" || (fs[1] != parentForward && fs[1] != parentInput) || fs[2] != "-i" || fs[4] != "-j" ||
			!strings.HasPrefix(fs[5], chainPrefix) {
			continue
		}
		stem, isFwd := strings.CutSuffix(fs[5], "-FWD")
		if !isFwd {
			var isIn bool
			if stem, isIn = strings.CutSuffix(fs[5], "-IN"); !isIn {
				continue
			}
		}
		bridges[stem] = append(bridges[stem], fs[3])
	}
	for stem, brs := range bridges {
		if stem == own {
			continue
		}
		gone := true
		for _, br := range brs {
			if _, err := net.InterfaceByName(br); err == nil {
				gone = false
			}
		}
		if gone {
			if err := f.removeChains(ctx, stem+"-FWD", stem+"-IN"); err != nil {
				f.log.Warn("egress: remove rules of a vanished network", "chains", stem, "err", err)
			} else {
				f.log.Info("egress: removed rules of a vanished network", "chains", stem, "bridges", brs)
			}
		}
	}
}

// detect finds the iptables binary whose tables hold the engine's
// DOCKER-USER chain: Docker uses whichever iptables is first on its PATH,
// and rules written with the other backend (nft vs legacy) would sit in
// tables the engine's packets also cross but in an order no one controls.
func (f *Firewall) detect(ctx context.Context) error {
	if f.iptBin != "" {
		return nil
	}
	var reasons []string
	for _, bin := range []string{"iptables", "iptables-nft", "iptables-legacy"} {
		path, err := exec.LookPath(bin)
		if err != nil {
			continue
		}
		restore := path + "-restore"
		if _, err := exec.LookPath(restore); err != nil {
			reasons = append(reasons, bin+": no "+bin+"-restore")
			continue
		}
		out, stderr, err := run(ctx, path, nil, "-w", "-S", parentForward)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s -S %s: %v %s", bin, parentForward, err, strings.TrimSpace(stderr)))
			continue
		}
		if !strings.Contains(out, "-N "+parentForward) {
			continue
		}
		f.iptBin, f.restore = path, restore
		version, _, _ := run(ctx, path, nil, "--version")
		f.log.Info("egress: using iptables", "binary", path, "version", strings.TrimSpace(version))
		return nil
	}
	if len(reasons) == 0 {
		return fmt.Errorf("%w: no iptables on this host's PATH", ErrFirewallUnavailable)
	}
	return fmt.Errorf("%w: no iptables with the engine's %s chain (%s)", ErrFirewallUnavailable, parentForward, strings.Join(reasons, "; "))
}

// ipt runs iptables with the xtables lock wait, returning stdout.
func (f *Firewall) ipt(ctx context.Context, args ...string) (string, error) {
	if f.failStep != nil {
		if err := f.failStep(args); err != nil {
			return "", fmt.Errorf("iptables %s: %w", strings.Join(args, " "), err)
		}
	}
	out, stderr, err := run(ctx, f.iptBin, nil, append([]string{"-w", "5"}, args...)...)
	if err != nil {
		return out, fmt.Errorf("iptables %s: %v: %s", strings.Join(args, " "), err, cleanStderr(stderr))
	}
	return out, nil
}

func (f *Firewall) runRestore(ctx context.Context, rules string) error {
	_, stderr, err := run(ctx, f.restore, strings.NewReader(rules), "-w", "5", "--noflush")
	if err != nil {
		return fmt.Errorf("iptables-restore: %v: %s", err, cleanStderr(stderr))
	}
	return nil
}

func run(ctx context.Context, bin string, stdin *strings.Reader, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// cleanStderr drops the nft backend's note about legacy tables, which is
// not an error.
func cleanStderr(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(l, "# Warning: iptables-legacy tables present") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " ")
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
