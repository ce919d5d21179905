package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Deleting an account keeps its row as a tombstone named deleted-<id>:
// disabled, without secrets, its bills still pointing at it; what it had
// is gone, its workbenches are marked to be deleted, its name is free at
// once and its home key is kept until the orchestrator removed the volume.
func TestDeleteUserLeavesATombstone(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	root, err := s.CreateUser(ctx, NewUser{Username: "root", Password: "long-enough-pw", Role: RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "long-enough-pw", Email: "bob@example.org", DisplayName: "Bob B"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, g.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateToken(ctx, bob.ID, "ci", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.AddNotification(ctx, bob.ID, "hello", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetQuota(ctx, ScopeUser, bob.ID, Limits{MaxGPUs: new(int64(2))}, "root"); err != nil {
		t.Fatal(err)
	}
	now := s.now()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO gpu_watches (user_id, gpu_model, created_at) VALUES (?, 'H100', ?)", []any{bob.ID, now}},
		{"INSERT INTO ssh_keys (user_id, name, public_key, fingerprint, created_at) VALUES (?, 'laptop', 'ssh-ed25519 AAAA', 'SHA256:x', ?)", []any{bob.ID, now}},
		{"INSERT INTO reservations (user_id, gpu_model, units, starts_at, ends_at, created_by, created_at) VALUES (?, 'H100', 1, ?, ?, 'bob', ?)",
			[]any{bob.ID, now.Add(time.Hour), now.Add(2 * time.Hour), now}},
	} {
		if err := s.db.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl := &Flavor{Name: "cpu", CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	wb := &Workbench{Name: "thesis", OwnerID: bob.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
	if err := s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Credit(ctx, bob.ID, 1_500_000, "", "goodwill", "root"); err != nil {
		t.Fatal(err)
	}

	preview, err := s.DeletionPreview(ctx, bob.ID)
	if err != nil || preview.Workbenches != 1 || preview.Bookings != 1 || preview.Tokens != 1 || preview.SSHKeys != 1 || len(preview.Groups) != 1 {
		t.Fatalf("preview %+v (%v)", preview, err)
	}
	d, err := s.DeleteUser(ctx, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.OldUsername != "bob" || d.Workbenches != 1 || d.Bookings != 1 || d.Tokens != 1 || d.SSHKeys != 1 || d.Notifications != 1 ||
		d.GPUWatches != 1 || strings.Join(d.Groups, ",") != "lab" {
		t.Fatalf("deletion %+v", d)
	}
	tomb, err := s.UserByID(ctx, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("deleted-%d", bob.ID)
	if tomb.Username != want || !tomb.Deleted() || !tomb.Disabled || tomb.PasswordHash != "" || tomb.Email != "" || tomb.DisplayName != "" ||
		tomb.AuthEpoch != bob.AuthEpoch+1 || tomb.ErasedAt != nil || tomb.HomeName() != "bob" {
		t.Fatalf("tombstone %+v", tomb)
	}
	for table, where := range map[string]string{
		"api_tokens": "user_id = ?", "ssh_keys": "user_id = ?", "notifications": "user_id = ?", "gpu_watches": "user_id = ?",
		"group_members": "user_id = ?", "quotas": "scope = 'user' AND subject_id = ?",
		"reservations": "user_id = ? AND released_at IS NULL", "workbenches": "owner_id = ? AND delete_requested_at IS NULL",
	} {
		var n int64
		if err := s.db.Table(table).Where(where, bob.ID).Count(&n).Error; err != nil || n != 0 {
			t.Errorf("%s: %d rows of the deleted account left (%v)", table, n, err)
		}
	}
	var lines int64
	if err := s.db.Table("ledger_entries").Where("user_id = ?", bob.ID).Count(&lines).Error; err != nil || lines != 1 {
		t.Errorf("ledger lines of the deleted account: %d (%v), want the 1 kept", lines, err)
	}
	if _, err := s.Authenticate(ctx, "bob", "long-enough-pw"); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("the old name still signs in: %v", err)
	}
	if _, err := s.Authenticate(ctx, want, ""); err == nil {
		t.Error("the tombstone signs in")
	}
	// Nothing gives the tombstone back a password, a role or its access.
	if err := s.SetPassword(ctx, bob.ID, "another-long-pw"); !errors.Is(err, ErrNotFound) {
		t.Errorf("password set on the tombstone: %v", err)
	}
	if err := s.SetUserDisabled(ctx, bob.ID, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("tombstone enabled: %v", err)
	}
	if _, err := s.DeleteUser(ctx, bob.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
	if _, _, err := s.RenameUser(ctx, bob.ID, "bobby"); !errors.Is(err, ErrNotFound) {
		t.Errorf("tombstone renamed: %v", err)
	}

	// Its erasure is pending until the orchestrator says it is done.
	pending, err := s.PendingUserErasures(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != bob.ID {
		t.Fatalf("pending erasures %v (%v)", pending, err)
	}
	// The name is free at once; the home key is not, while the old
	// volume may still be there.
	bob2, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "long-enough-pw"})
	if err != nil {
		t.Fatalf("the old name is not free: %v", err)
	}
	if bob2.HomeName() == "bob" || !strings.HasPrefix(bob2.HomeName(), "bob-") {
		t.Errorf("a new bob would mount the deleted one's home: home key %q", bob2.HomeName())
	}
	if err := s.UserErased(ctx, bob.ID, s.now()); err != nil {
		t.Fatal(err)
	}
	if pending, _ := s.PendingUserErasures(ctx); len(pending) != 0 {
		t.Errorf("still pending after UserErased: %v", pending)
	}
	if tomb, _ := s.UserByID(ctx, bob.ID); tomb.HomeName() != want {
		t.Errorf("erased tombstone's home key %q, want %q", tomb.HomeName(), want)
	}
	bob3, err := s.CreateUser(ctx, NewUser{Username: "bobcat", Password: "long-enough-pw"})
	if err != nil || bob3.HomeName() != "bobcat" {
		t.Fatalf("a new name's home key %q (%v)", bob3.HomeName(), err)
	}
	// No one may take a tombstone's kind of name.
	if _, err := s.CreateUser(ctx, NewUser{Username: "deleted-99", Password: "long-enough-pw"}); err == nil {
		t.Error("deleted-99 was accepted as a new username")
	}
	// The one administrator left who can sign in is not deleted.
	if _, err := s.DeleteUser(ctx, root.ID); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("last admin deleted: %v", err)
	}
	other, _ := s.CreateUser(ctx, NewUser{Username: "ops", Password: "long-enough-pw", Role: RoleAdmin})
	if err := s.SetUserDisabled(ctx, other.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteUser(ctx, root.ID); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("last admin who can sign in deleted beside a disabled one: %v", err)
	}
	if err := s.SetUserDisabled(ctx, other.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteUser(ctx, root.ID); err != nil {
		t.Errorf("an admin with another beside them: %v", err)
	}
}

// A rename changes the name one signs in with, is checked as a new name
// is (well-formed, not taken), and keeps the home key: the engine's
// volume keeps its name, and a new account given the old name gets a
// home of its own.
func TestRenameUserKeepsItsHome(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	bob, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "long-enough-pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "long-enough-pw"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"Robert", "r", "has space", "deleted-7", ""} {
		_, _, err := s.RenameUser(ctx, bob.ID, bad)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "username" || ve.Taken {
			t.Errorf("rename to %q: %v, want an invalid username", bad, err)
		}
	}
	_, _, err = s.RenameUser(ctx, bob.ID, "alice")
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "username" || !ve.Taken {
		t.Errorf("rename to a taken name: %v", err)
	}
	if old, renamed, err := s.RenameUser(ctx, bob.ID, "bob"); err != nil || renamed || old != "bob" {
		t.Errorf("rename to its own name: %q %v %v", old, renamed, err)
	}
	old, renamed, err := s.RenameUser(ctx, bob.ID, " robert ")
	if err != nil || !renamed || old != "bob" {
		t.Fatalf("rename: %q %v %v", old, renamed, err)
	}
	u, _ := s.UserByID(ctx, bob.ID)
	if u.Username != "robert" || u.HomeName() != "bob" {
		t.Fatalf("after the rename: name %q, home %q", u.Username, u.HomeName())
	}
	if _, err := s.Authenticate(ctx, "bob", "long-enough-pw"); err == nil {
		t.Error("the old name still signs in")
	}
	if _, err := s.Authenticate(ctx, "robert", "long-enough-pw"); err != nil {
		t.Errorf("the new name does not sign in: %v", err)
	}
	if h, err := s.UserByHomeName(ctx, "bob"); err != nil || h.ID != bob.ID {
		t.Errorf("the volume labelled bob belongs to %v (%v)", h, err)
	}
	nb, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "long-enough-pw"})
	if err != nil {
		t.Fatal(err)
	}
	if nb.HomeName() == "bob" {
		t.Error("a new bob got the renamed account's home key")
	}
	if h, err := s.UserByHomeName(ctx, nb.HomeName()); err != nil || h.ID != nb.ID {
		t.Errorf("the new bob's volume belongs to %v (%v)", h, err)
	}
	// Renamed twice, the home key stays the first name.
	if _, _, err := s.RenameUser(ctx, bob.ID, "rob"); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.UserByID(ctx, bob.ID); u.HomeName() != "bob" {
		t.Errorf("home key after a second rename: %q", u.HomeName())
	}
}
