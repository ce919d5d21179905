package models

import "time"

// SetClock replaces the time the store checks input against and stamps
// rows with (tests pin it instead of depending on the date they run on).
// Call it before the store is used.
func (s *Store) SetClock(now func() time.Time) {
	s.now = func() time.Time { return now().UTC() }
}

// Now is the store's clock, for pages that show what the store decides by
// it (whether a pending SSH key's code has expired).
func (s *Store) Now() time.Time { return s.now() }
