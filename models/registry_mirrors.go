package models

import (
	"context"
	"strings"
)

// registryMirrorsKey holds the admin's registry mirrors, one
// "registry = mirror" per line (parsed and checked by the runtime, which
// rewrites every pull with them).
const registryMirrorsKey = "registry.mirrors"

// RegistryMirrors returns the mirrors setting as the admin last saved it
// ("" when none).
func (s *Store) RegistryMirrors(ctx context.Context) (string, error) {
	return s.Setting(ctx, registryMirrorsKey)
}

// SetRegistryMirrors stores the mirrors setting (already checked by the
// caller); blank removes it.
func (s *Store) SetRegistryMirrors(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return s.db.WithContext(ctx).Exec("DELETE FROM settings WHERE key = ?", registryMirrorsKey).Error
	}
	if len(text) > 8<<10 {
		return invalid("mirrors", "must be at most 8 KiB")
	}
	return s.SetSetting(ctx, registryMirrorsKey, text)
}
