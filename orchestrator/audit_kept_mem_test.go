package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
)

// A sign-in (or any action recorded after it happened) while the database
// cannot be written lost its audit row: only the log said "audit write
// failed". The row is kept in memory and written once the database can
// be written, with the time of the sign-in, before the rows after it.
func TestMemAuditRowKeptWhileTheDatabaseCannotBeWritten(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	signedIn := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	r.store.SetClock(func() time.Time { return signedIn })

	if err := r.store.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.store.QueryOnly(context.Background(), false) })
	if err := r.m.Record(ctx, models.AuditRecord{Actor: "alice", Action: "session.login", Target: "alice", After: map[string]string{"addr": "192.0.2.7"}}); !models.Unwritable(err) {
		t.Fatalf("recording with the database unwritable: %v, want its refusal (for the caller to log)", err)
	}

	if err := r.store.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	r.store.SetClock(func() time.Time { return signedIn.Add(time.Hour) })
	if err := r.m.Record(ctx, models.AuditRecord{Actor: "bob", Action: "session.login", Target: "bob"}); err != nil {
		t.Fatal(err)
	}
	rows, err := r.store.ListAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var alice, bob *models.AuditEntry
	for i := range rows {
		switch {
		case rows[i].Action == "session.login" && rows[i].Actor == "alice":
			alice = &rows[i]
		case rows[i].Action == "session.login" && rows[i].Actor == "bob":
			bob = &rows[i]
		}
	}
	if alice == nil || bob == nil {
		t.Fatalf("audit rows: alice's sign-in %v, bob's %v; want both", alice, bob)
	}
	if !alice.At.Equal(signedIn) || alice.After != `{"addr":"192.0.2.7"}` || alice.ID > bob.ID {
		t.Errorf("alice's sign-in row: %+v (bob's id %d); want it at %s, with its address, before bob's", *alice, bob.ID, signedIn)
	}
}
