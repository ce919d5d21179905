package models

import (
	"context"
	"strings"
	"sync"
	"time"

	// The zone database inside the binary: an air-gapped server's portal
	// image has no /usr/share/zoneinfo.
	_ "time/tzdata"
)

// ParseTimeZone checks a zone a user typed: an IANA name such as
// "Asia/Shanghai" or "UTC"; "" means UTC only. "Local" is refused: it is
// the server's zone, which says nothing to a user elsewhere.
func ParseTimeZone(name string) (string, *time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil, nil
	}
	if len(name) > 64 || strings.EqualFold(name, "local") {
		return "", nil, invalid("time_zone", "not a time zone: use a name such as Asia/Shanghai or Europe/Berlin")
	}
	if loc, ok := zones.Load(name); ok {
		return name, loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return "", nil, invalid("time_zone", "not a time zone: use a name such as Asia/Shanghai or Europe/Berlin")
	}
	zones.Store(name, loc)
	return name, loc, nil
}

// zones keeps the zones loaded: every page a user with a zone loads needs
// theirs, and loading one reads the zone database.
var zones sync.Map

// SetUserTimeZone saves the zone a user reads times in beside UTC ("" for
// UTC only), after ParseTimeZone.
func (s *Store) SetUserTimeZone(ctx context.Context, userID int64, name string) error {
	name, _, err := ParseTimeZone(name)
	if err != nil {
		return err
	}
	return s.updateUser(ctx, userID, map[string]any{"time_zone": name})
}
