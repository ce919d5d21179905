package models

import (
	"context"
	"errors"
	"testing"
)

// Unique-constraint failures are told by the driver's code: a duplicate is
// one, another constraint failure (NOT NULL) or a wrapped error are judged
// by their code, not by words in the message.
func TestUniqueViolationByCode(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	db := s.db.WithContext(ctx)
	if err := db.Exec(`CREATE TABLE u_test (k TEXT NOT NULL UNIQUE)`).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`INSERT INTO u_test (k) VALUES ('a')`).Error; err != nil {
		t.Fatal(err)
	}
	dup := db.Exec(`INSERT INTO u_test (k) VALUES ('a')`).Error
	if !uniqueViolation(dup) || !uniqueViolation(errors.Join(errors.New("saving"), dup)) {
		t.Errorf("duplicate key not recognised: %v", dup)
	}
	null := db.Exec(`INSERT INTO u_test (k) VALUES (NULL)`).Error
	if null == nil || uniqueViolation(null) {
		t.Errorf("NOT NULL failure %v judged a unique violation", null)
	}
	if uniqueViolation(errors.New("UNIQUE constraint failed: u_test.k")) {
		t.Error("a plain error with the words was judged a unique violation")
	}
}
