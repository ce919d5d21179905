package models

import (
	"context"
	"errors"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// Deleting an account. The ledger and the audit log are append-only and
// refer to the account (the ledger by id), so its row stays as a
// tombstone: renamed deleted-<id> (the old name is free for a new
// account), disabled, without a password, email, single sign-on link or
// any other secret. What the user had is removed in the same transaction
// (tokens, SSH keys, notifications, GPU watches, group memberships,
// quota and booking-cap overrides; bookings not over are released), and
// each of their workbenches is marked to be deleted. Deleting those
// containers and the home volume is the engine's work: the orchestrator
// does it at once and, where it is cut short (the portal killed, the
// engine down), finishes it at its next reconciliation
// (PendingUserErasures), because the request that asked may be gone.

// TombstonePrefix starts the name of every deleted account ("deleted-12");
// no account may be given such a name (ValidUsername).
const TombstonePrefix = "deleted-"

// TombstoneName is the name a deleted account's row keeps.
func TombstoneName(id int64) string { return TombstonePrefix + strconv.FormatInt(id, 10) }

// DeletedUserKey is the name the billing pages give the account id, now
// named name, once it is deleted: its name then beside its tombstone's
// (UserKeySQL), "bob (deleted-12)".
func DeletedUserKey(name string, id int64) string { return name + " (" + TombstoneName(id) + ")" }

// ErrLastAdmin refuses to delete the only administrator left who can sign
// in: nobody could manage the portal after it.
var ErrLastAdmin = errors.New("this is the last administrator who can sign in: make another user an administrator first")

// UserDeletion is what deleting an account removed, for the audit log and
// the administrator's answer.
type UserDeletion struct {
	OldUsername   string   `json:"-"`
	Workbenches   int64    `json:"workbenches"` // marked to be deleted (containers and home go next)
	Bookings      int64    `json:"bookings_released"`
	Tokens        int64    `json:"tokens"` // API and workbench tokens
	SSHKeys       int64    `json:"ssh_keys"`
	Notifications int64    `json:"notifications"`
	GPUWatches    int64    `json:"gpu_watches"`
	Groups        []string `json:"groups"` // the groups it left
}

// DeleteUser turns the live account id into its tombstone and removes what
// it had (see above), in one transaction. The account must not be the last
// administrator who can sign in (ErrLastAdmin); a tombstone or an unknown
// id is ErrNotFound.
func (s *Store) DeleteUser(ctx context.Context, id int64) (UserDeletion, error) {
	var d UserDeletion
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u User
		if err := tx.Where("id = ? AND deleted_at IS NULL", id).First(&u).Error; err != nil {
			return notFound(err)
		}
		d.OldUsername = u.Username
		// Checked in the transaction: two administrators deleting each
		// other at once leave one.
		if last, err := isLastAdmin(tx, &u); err != nil {
			return err
		} else if last {
			return ErrLastAdmin
		}
		var err error
		if d.Groups, err = groupsOf(tx, id); err != nil {
			return err
		}
		count := func(n *int64, sql string, args ...any) {
			if err != nil {
				return
			}
			res := tx.Exec(sql, args...)
			err = res.Error
			if n != nil {
				*n += res.RowsAffected
			}
		}
		// Its workbenches go through the orchestrator's delete (the
		// container first); their pending mark is what a restart finds.
		// The home volume goes with the account (erased after them), not
		// with one of them: delete_data off.
		count(&d.Workbenches, "UPDATE workbenches SET delete_requested_at = COALESCE(delete_requested_at, ?), delete_data = 0 WHERE owner_id = ? AND deleted_at IS NULL", now, id)
		count(&d.Bookings, "UPDATE reservations SET released_at = ?, release_reason = ? WHERE user_id = ? AND released_at IS NULL AND ends_at > ?", now, "the account was deleted", id, now)
		count(&d.Tokens, "DELETE FROM api_tokens WHERE user_id = ?", id)
		count(&d.Tokens, "DELETE FROM workbench_tokens WHERE user_id = ?", id)
		count(&d.SSHKeys, "DELETE FROM ssh_keys WHERE user_id = ?", id)
		count(&d.Notifications, "DELETE FROM notifications WHERE user_id = ?", id)
		count(&d.GPUWatches, "DELETE FROM gpu_watches WHERE user_id = ?", id)
		count(nil, "DELETE FROM group_members WHERE user_id = ?", id)
		if err == nil {
			// Its usage until now stays its groups' (billed later too).
			err = endMemberships(tx, now, "user_id = ?", id)
		}
		count(nil, "DELETE FROM notebook_codes WHERE user_id = ?", id)
		count(nil, "DELETE FROM notebook_sessions WHERE user_id = ?", id)
		count(nil, "DELETE FROM login_devices WHERE user_id = ?", id)
		count(nil, "DELETE FROM quotas WHERE scope = 'user' AND subject_id = ?", id)
		count(nil, "DELETE FROM reservation_caps WHERE scope = 'user' AND subject_id = ?", id)
		if err != nil {
			return err
		}
		// The tombstone. Its home key stays until the home volume is gone
		// (UserErased): the orchestrator finds the volume by it.
		return tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{
			"username": TombstoneName(id), "former_username": u.Username, "home_key": u.HomeName(), "display_name": "", "email": "", "password_hash": "",
			"role": RoleUser, "disabled": true, "auth_epoch": gorm.Expr("auth_epoch + 1"), "oidc_issuer": "", "oidc_subject": "",
			"locale": "", "time_zone": "", "email_workbench_notices": false, "deleted_at": now, "erased_at": nil, "updated_at": now,
		}).Error
	})
	return d, err
}

// groupsOf names the groups userID is a member of.
func groupsOf(tx *gorm.DB, userID int64) ([]string, error) {
	names := []string{}
	err := tx.Table("groups g").Joins("JOIN group_members gm ON gm.group_id = g.id").Where("gm.user_id = ?", userID).
		Order("g.name").Pluck("g.name", &names).Error
	return names, err
}

// PendingUserErasures lists the deleted accounts whose workbenches or home
// volume are still to be removed, oldest deletion first.
func (s *Store) PendingUserErasures(ctx context.Context) ([]User, error) {
	var out []User
	err := s.db.WithContext(ctx).Where("deleted_at IS NOT NULL AND erased_at IS NULL").Order("deleted_at, id").Find(&out).Error
	return out, err
}

// UserErased records that the deleted account id's workbenches and home
// volume are gone; its home key becomes its tombstone name, so the old
// name's home key is free again.
func (s *Store) UserErased(ctx context.Context, id int64, at time.Time) error {
	return s.db.WithContext(ctx).Model(&User{}).Where("id = ? AND deleted_at IS NOT NULL", id).
		Updates(map[string]any{"erased_at": at, "home_key": gorm.Expr("username")}).Error
}

// DeletionPreview counts what DeleteUser would remove from the live
// account id, changing nothing: the confirmation page says it.
func (s *Store) DeletionPreview(ctx context.Context, id int64) (UserDeletion, error) {
	var d UserDeletion
	db := s.db.WithContext(ctx)
	var u User
	if err := db.Where("id = ? AND deleted_at IS NULL", id).First(&u).Error; err != nil {
		return d, notFound(err)
	}
	d.OldUsername = u.Username
	now := s.now()
	var err error
	count := func(n *int64, sql string, args ...any) {
		if err != nil {
			return
		}
		var k int64
		err = db.Raw(sql, args...).Scan(&k).Error
		*n += k
	}
	count(&d.Workbenches, "SELECT COUNT(*) FROM workbenches WHERE owner_id = ? AND deleted_at IS NULL", id)
	count(&d.Bookings, "SELECT COUNT(*) FROM reservations WHERE user_id = ? AND released_at IS NULL AND ends_at > ?", id, now)
	count(&d.Tokens, "SELECT COUNT(*) FROM api_tokens WHERE user_id = ? AND revoked_at IS NULL", id)
	count(&d.Tokens, "SELECT COUNT(*) FROM workbench_tokens WHERE user_id = ? AND revoked_at IS NULL", id)
	count(&d.SSHKeys, "SELECT COUNT(*) FROM ssh_keys WHERE user_id = ?", id)
	count(&d.Notifications, "SELECT COUNT(*) FROM notifications WHERE user_id = ?", id)
	count(&d.GPUWatches, "SELECT COUNT(*) FROM gpu_watches WHERE user_id = ?", id)
	if err != nil {
		return d, err
	}
	d.Groups, err = groupsOf(db, id)
	return d, err
}

// IsLastAdmin reports whether the account id is the only administrator
// left who can sign in (DeleteUser refuses it).
func (s *Store) IsLastAdmin(ctx context.Context, id int64) (bool, error) {
	var u User
	db := s.db.WithContext(ctx)
	if err := db.Where("id = ?", id).First(&u).Error; err != nil {
		return false, notFound(err)
	}
	return isLastAdmin(db, &u)
}

func isLastAdmin(db *gorm.DB, u *User) (bool, error) {
	if u.Role != RoleAdmin || u.Deleted() {
		return false, nil
	}
	var others int64
	err := db.Model(&User{}).Where("role = ? AND id <> ? AND deleted_at IS NULL AND NOT disabled", RoleAdmin, u.ID).Count(&others).Error
	return others == 0, err
}
