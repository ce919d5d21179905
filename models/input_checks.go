package models

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"

	"workbench/models/pricing"
)

// Checks that refuse input which would be stored without complaint and
// harm later (issue 9, "every input validated before anything changes").
// Each names the field at fault, so the API answers 400 invalid_<field>.

// systemDirs are the container paths a workbench home may not be or lie
// under: mounting a volume there would shadow the system (or, for /proc,
// /sys and /dev, fail the start or expose the host's kernel interfaces).
var systemDirs = []string{"/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64",
	"/libx32", "/boot", "/run", "/var/run", "/var/lib", "/var/log", "/var/cache", "/tmp", "/var/tmp"}

// validHomePath checks an image's home path: absolute, clean, one plain
// path (no ":" or ",", which mean something in volume specs, no control
// characters) and not a system directory or inside one.
func validHomePath(p string) error {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "/" || len(p) > 200 {
		return invalid("home_path", "must be an absolute, clean path such as /home/jovyan")
	}
	if strings.ContainsAny(p, ":,\\") || strings.ContainsFunc(p, unicode.IsControl) {
		return invalid("home_path", "must not contain : , \\ or control characters")
	}
	for _, d := range systemDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return invalid("home_path", "must not be a system directory (%s): use a path such as /home/jovyan", d)
		}
	}
	return nil
}

// passwordHasContent refuses passwords that are only whitespace at either
// end of a short core: ten spaces are ten characters but no secret.
func passwordHasContent(pw string) error {
	if len(strings.TrimSpace(pw)) < MinPasswordLength {
		return invalid("password", "must have at least %d characters that are not spaces", MinPasswordLength)
	}
	return nil
}

// maxPriceLead bounds how far ahead a price may take effect: a typo such as
// 9999-12-31 would otherwise sit in the schedule forever.
const maxPriceLead = 10 * 365 * 24 * time.Hour

// checkRateBounds refuses an effective time more than ten years ahead.
func (s *Store) checkRateBounds(_ context.Context, r *PriceRate) error {
	if r.EffectiveFrom.After(s.now().Add(maxPriceLead)) {
		return invalid("effective_from", "must be at most 10 years ahead")
	}
	return nil
}

// CheckRateModel refuses a GPU rate for a model the portal does not know.
// Known models are those with a rate already (the start seeds one for every
// model in the inventory) or a flavor of that model. The handlers call it
// for what admins send; the store itself stays usable with any model name.
func (s *Store) CheckRateModel(ctx context.Context, r PriceRate) error {
	if r.Resource != pricing.GPU && r.Resource != pricing.Slice {
		return nil
	}
	known, err := s.KnownGPUModel(ctx, r.GPUModel)
	if err != nil {
		return err
	}
	if !known {
		return invalid("gpu_model", "unknown GPU model %q: no GPU, flavor or rate of that model exists", r.GPUModel)
	}
	return nil
}

// KnownGPUModel reports whether model names a GPU model the portal has seen:
// in the price list or in a flavor.
func (s *Store) KnownGPUModel(ctx context.Context, model string) (bool, error) {
	var n int64
	err := s.sql.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM price_rates WHERE resource = ? AND gpu_model = ?) +
		(SELECT COUNT(*) FROM flavors WHERE gpu_model = ?)`, pricing.GPU, model, model).Scan(&n)
	return n > 0, err
}

// asOfNotInFuture refuses a cloud price observed after today: as_of says
// when the price was seen, so 2999 is a typo. A month, quarter or year
// counts from its first day.
func asOfNotInFuture(asOf string, now time.Time) error {
	if asOf == "" {
		return nil
	}
	var start time.Time
	var err error
	switch {
	case len(asOf) == 10:
		start, err = time.Parse("2006-01-02", asOf)
	case len(asOf) == 7 && asOf[5] == 'Q':
		var y, q int
		if _, err = fmt.Sscanf(asOf, "%d-Q%d", &y, &q); err == nil {
			start = time.Date(y, time.Month(3*(q-1)+1), 1, 0, 0, 0, 0, time.UTC)
		}
	case len(asOf) == 7:
		start, err = time.Parse("2006-01", asOf)
	default:
		start, err = time.Parse("2006", asOf)
	}
	if err != nil {
		return invalid("as_of", "is not a date")
	}
	if start.After(now.UTC()) {
		return invalid("as_of", "must not be in the future: it says when the price was seen")
	}
	return nil
}

// CheckQuotaInput refuses quota lists naming images, flavors or GPU models
// that do not exist (an allow-list of only unknown names blocks every
// launch), and a maximum idle timeout of 0 (no idle timeout could be chosen,
// so every launch would be refused). The handlers call it for what admins
// send, before SetQuota.
func (s *Store) CheckQuotaInput(ctx context.Context, l Limits) error {
	if l.MaxIdleMinutes != nil && *l.MaxIdleMinutes < 1 {
		return invalid("max_idle_minutes", "must be at least 1 (leave empty to inherit; empty in the default row is the portal's maximum)")
	}
	// A runtime limit of 0 read as "no limit" where runs are stopped and as
	// the strictest limit where a user's groups are merged (the most
	// generous wins): empty is the one way to say "none".
	if l.MaxRuntimeHours != nil && *l.MaxRuntimeHours < 1 {
		return invalid("max_runtime_hours", "must be at least 1 (leave empty to inherit; empty in the default row is no limit)")
	}
	for _, list := range []struct {
		field, table string
		names        []string
	}{{"allowed_images", "images", l.AllowedImages}, {"allowed_flavors", "flavors", l.AllowedFlavors}} {
		for _, name := range list.names {
			var n int64
			if err := s.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+list.table+" WHERE name = ?", name).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return invalid(list.field, "unknown name %q: use the names shown in the catalog", name)
			}
		}
	}
	for model := range l.MaxGPUsPerModel {
		known, err := s.KnownGPUModel(ctx, model)
		if err != nil {
			return err
		}
		if !known {
			return invalid("max_gpus_per_model", "unknown GPU model %q", model)
		}
	}
	return nil
}
