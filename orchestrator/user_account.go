package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"workbench/models"
)

// Renaming and deleting accounts (models/user_rename.go, user_delete.go):
// the database changes with their audit rows here, and the engine's share
// of a deletion (the user's containers and home volume), which must not
// depend on the request that asked for it.

// EventRenamed is the notice a user gets when an administrator renames
// their account: the name they sign in with changed under them.
const EventRenamed = "account_renamed"

// errNothingRenamed ends Rename's transaction when the account had the
// name already: nothing changed, so no audit row.
var errNothingRenamed = errors.New("the account has this name already")

// CommandLine is the administrator a change made on the server's command
// line is audited as (`workbench user rename`, `user password`, …).
const CommandLine = "cli"

// Accounts renames and deletes accounts in the database, each change with
// its audit row, and tells a renamed user: all of it that needs no engine.
// The portal's Manager does its renames and deletions through it; the
// command line uses it alone (NewAccounts), while a portal runs on the
// same data directory or not: a deletion's engine part (the account's
// containers and home volume) is the portal's reconciliation's then,
// which finds the tombstone (PendingUserErasures) at its next pass.
type Accounts struct {
	store   *models.Store
	log     *slog.Logger
	notices ownerNotices
}

// NewAccounts is Accounts for a process without the portal's manager.
func NewAccounts(store *models.Store, log *slog.Logger) *Accounts {
	return &Accounts{store: store, log: log.With("component", "accounts")}
}

// NotifyVia adds the channels (email, webhook) a renamed user is told by
// besides their notifications, as NotifyOwnersVia does for the portal.
func (a *Accounts) NotifyVia(publicURL string, senders ...Sender) {
	a.notices.publicURL = strings.TrimSuffix(publicURL, "/")
	a.notices.senders = append(a.notices.senders, senders...)
}

// accounts is Accounts on the manager's store, log and channels.
func (m *Manager) accounts() *Accounts {
	return &Accounts{store: m.store, log: m.log, notices: m.notices}
}

// RenameUser gives u the username name for the administrator by (see
// Accounts.Rename). u is updated.
func (m *Manager) RenameUser(ctx context.Context, by string, u *models.User, name string) (renamed bool, err error) {
	return m.accounts().Rename(ctx, by, u, name)
}

// Rename gives u the username name for the administrator by, audited as
// user.rename (target and before the old name, after the new), and tells
// u in their notifications (and by email where the portal sends it).
// renamed is false when u had the name already. u is updated.
func (a *Accounts) Rename(ctx context.Context, by string, u *models.User, name string) (renamed bool, err error) {
	var old string
	err = audited(ctx, a.store, by, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		old, renamed, err = tx.RenameUser(ctx, u.ID, name)
		if err == nil && !renamed {
			err = errNothingRenamed
		}
		if err != nil {
			return models.AuditRecord{}, err
		}
		nu, err := tx.UserByID(ctx, u.ID)
		if err != nil {
			return models.AuditRecord{}, err
		}
		*u = *nu
		return models.AuditRecord{Action: "user.rename", Target: old,
			Before: map[string]string{"username": old}, After: map[string]string{"username": u.Username}}, nil
	})
	if errors.Is(err, errNothingRenamed) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	a.log.Info("user renamed", "id", u.ID, "from", old, "to", u.Username, "by", by)
	a.notices.tell(ctx, a.store, a.log, u.ID, nil, EventRenamed, renamedNotice(by, old, u.Username), "/", true)
	return true, nil
}

// renamedNotice is what a renamed user reads: who renamed them (an
// administrator's name, or the server's command line, whose audit actor
// "cli" names no one) and what stays.
func renamedNotice(by, old, name string) string {
	if by == CommandLine {
		return reasonf("An administrator renamed your account from %s to %s on the server's command line: sign in as %s from now on. Your workbenches, files, API tokens, SSH keys, notebook links and SSH commands are unchanged.",
			old, name, name)
	}
	return reasonf("An administrator (%s) renamed your account from %s to %s: sign in as %s from now on. Your workbenches, files, API tokens, SSH keys, notebook links and SSH commands are unchanged.",
		by, old, name, name)
}

// DeleteUser deletes u's account for the administrator by (see
// Accounts.Delete), then drains the queue (its bookings are released and
// its queued launches go) and drops its budget timer. The engine's part is
// EraseUser's, which the caller runs next (and reconciliation, if it is
// cut short).
func (m *Manager) DeleteUser(ctx context.Context, by string, u *models.User) (models.UserDeletion, error) {
	d, err := m.accounts().Delete(ctx, by, u)
	if err != nil {
		return d, err
	}
	m.kickDrain()
	m.budgetChanged(u.ID)
	return d, nil
}

// Delete deletes u's account for the administrator by: its row becomes
// the tombstone, what it had in the database goes and its workbenches are
// marked to be deleted, in one transaction audited as user.delete (target
// and before the old username; after, the tombstone's name and what was
// removed). The last administrator who can sign in is refused
// (models.ErrLastAdmin). The account's containers and home volume are
// left to the engine's side: the Manager's EraseUser, or its next
// reconciliation.
func (a *Accounts) Delete(ctx context.Context, by string, u *models.User) (models.UserDeletion, error) {
	var d models.UserDeletion
	err := audited(ctx, a.store, by, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if d, err = tx.DeleteUser(ctx, u.ID); err != nil {
			return models.AuditRecord{}, err
		}
		return models.AuditRecord{Action: "user.delete", Target: d.OldUsername, Before: map[string]string{"username": d.OldUsername},
			After: map[string]any{"username": models.TombstoneName(u.ID), "removed": d}}, nil
	})
	if err != nil {
		return d, err
	}
	a.log.Info("user deleted", "id", u.ID, "username", d.OldUsername, "by", by, "workbenches", d.Workbenches, "bookings_released", d.Bookings)
	return d, nil
}

// EraseUser removes the deleted account id's containers and home volume
// (stopping what runs at once: the account is gone) and the saved images
// no other workbench uses, then records it erased. Like a workbench's
// delete it runs to its end in the manager whatever happens to ctx, which
// only bounds the wait for the result; what it could not do (the engine
// down) the next reconciliation does.
func (m *Manager) EraseUser(ctx context.Context, id int64) error {
	return m.detached(ctx, func(ctx context.Context) error { return m.eraseUser(ctx, id, true) })
}

// errEraseLater: something else holds one of the deleted account's
// workbenches now; reconciliation comes back to it.
var errEraseLater = &ErrState{Message: reasonf("a workbench of the deleted account is busy; it is removed when it is free")}

// eraseUser does EraseUser's work. wait: wait for what holds the account's
// workbenches (a stop, a launch, which it cancels), as the administrator's
// request does; reconciliation does not wait, it comes back.
func (m *Manager) eraseUser(ctx context.Context, id int64, wait bool) error {
	claim := "user:" + strconv.FormatInt(id, 10) // workbench ids never have a colon
	for !m.claim(claim, false) {
		if !wait {
			return errEraseLater
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	defer m.release(claim)
	u, err := m.store.UserByID(ctx, id)
	if err != nil || !u.Deleted() || u.ErasedAt != nil {
		return err
	}
	wbs, err := m.store.ListWorkbenches(ctx, id)
	if err != nil {
		return err
	}
	for _, wb := range wbs {
		if err := m.eraseWorkbench(ctx, wb.ID, u.HomeName(), wait); err != nil {
			return err
		}
	}
	if n, err := m.store.CountWorkbenches(ctx, id); err != nil {
		return err
	} else if n > 0 { // one made or found meanwhile: not erased yet
		return errEraseLater
	}
	imgs, err := m.store.SavedImagesOf(ctx, id)
	if err != nil {
		return err
	}
	for i := range imgs {
		// Shared with a group, another user's workbench may run on it:
		// that one stays (its owner is the tombstone).
		if err := m.DeleteSavedImage(ctx, &imgs[i]); err != nil {
			m.log.Info("erase: saved image kept", "user_id", id, "image", imgs[i].Name, "err", err)
		}
	}
	vol := m.homeVolume(u.HomeName())
	done := m.homeRemovalBegins(vol)
	defer done()
	if err := m.rt.RemoveVolume(ctx, vol); err != nil {
		return err
	}
	m.homeRemoved(ctx, id, vol)
	if err := m.store.UserErased(ctx, id, m.now()); err != nil {
		return err
	}
	m.log.Info("deleted account erased", "id", id, "volume", vol)
	return nil
}

// eraseWorkbench deletes workbench id of a deleted account, whatever its
// state: a launch under way is cancelled, a running container killed.
func (m *Manager) eraseWorkbench(ctx context.Context, id, homeName string, wait bool) error {
	for !m.claim(id, false) {
		if !wait {
			return errEraseLater
		}
		if m.isLaunching(id) {
			m.cancelLaunch(id) // the delete decides its state
			continue
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	defer m.release(id)
	wb, err := m.store.WorkbenchByID(ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	if err := m.finishDelete(ctx, wb, homeName, false); err != nil {
		return err
	}
	// A cancelled launch may have made a container it had not recorded.
	return m.rt.Remove(ctx, m.containerName(id))
}

// finishPendingUserErasures finishes the erasures of deleted accounts cut
// short (the portal killed, the engine down when it was asked).
func (m *Manager) finishPendingUserErasures(ctx context.Context) {
	pending, err := m.store.PendingUserErasures(ctx)
	if err != nil {
		m.log.Warn("reconcile: pending account erasures", "err", err)
		return
	}
	for _, u := range pending {
		if err := m.eraseUser(ctx, u.ID, false); err != nil && !errors.Is(err, errEraseLater) {
			m.log.Warn("reconcile: erasing a deleted account", "id", u.ID, "err", err)
		}
	}
}
