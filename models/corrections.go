package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// ResourceCredit is the resource of a credit line: money given back to a
// user, not tied to any usage.
const ResourceCredit = "credit"

// MaxCreditMicros bounds one credit (a million in the major unit).
const MaxCreditMicros = 1_000_000 * 1_000_000

// correctionReason checks the reason every correction must carry.
func correctionReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "", invalid("reason", "say why: a correction needs a reason")
	}
	if len(reason) > 500 {
		return "", invalid("reason", "must be 500 characters or fewer")
	}
	return reason, nil
}

// Credit appends a credit of amountMicros (> 0) to a user's ledger, dated
// now, with a reason, and audits it in the same transaction. workbenchID
// may name the workbench it is for ("" for none). Nothing is edited.
func (s *Store) Credit(ctx context.Context, userID, amountMicros int64, workbenchID, reason, actor string) (*LedgerEntry, error) {
	e, _, err := s.CreditOnce(ctx, "", userID, amountMicros, workbenchID, reason, actor)
	return e, err
}

// maxCreditKey bounds a caller's idempotency key (its refusal names it).
const maxCreditKey = 100

// CreditOnce is Credit under the caller's idempotency key (the billing
// form's, or an API client's Idempotency-Key): a form sent twice — a
// double click without JavaScript, a resubmitted page — must not credit
// twice. The same key again returns the line it made (repeated true) if it
// is the same credit, and is refused if it is another; "" makes a new
// credit every time. The ledger's unique idempotency key is the lock.
func (s *Store) CreditOnce(ctx context.Context, key string, userID, amountMicros int64, workbenchID, reason, actor string) (*LedgerEntry, bool, error) {
	reason, err := correctionReason(reason)
	if err != nil {
		return nil, false, err
	}
	if amountMicros <= 0 || amountMicros > MaxCreditMicros {
		// Both units named: the form takes currency units, the API micro-units.
		return nil, false, invalid("amount", "must be more than 0 and at most 1,000,000 in currency units (1000000000000 micro-units)")
	}
	if len(key) > maxCreditKey {
		return nil, false, invalid("idempotency_key", "must be 100 characters or fewer")
	}
	ledgerKey := "credit:" + RandomSecret(12)
	if key != "" {
		// The actor is part of the key: two admins cannot collide.
		ledgerKey = "credit:" + actor + ":" + key
	}
	now := s.now()
	e := LedgerEntry{IdempotencyKey: ledgerKey, UserID: userID, WorkbenchID: workbenchID,
		Resource: ResourceCredit, PeriodStart: now, PeriodEnd: now, AmountMicros: -amountMicros,
		Note: reason, CreatedBy: actor, CreatedAt: now}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u User
		if err := tx.Select("id", "username").First(&u, userID).Error; err != nil {
			return notFound(err)
		}
		if workbenchID != "" {
			var n int64
			if err := tx.Model(&Workbench{}).Where("id = ? AND owner_id = ?", workbenchID, userID).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return invalid("workbench_id", "no workbench %q of this user", workbenchID)
			}
		}
		if gs, err := userGroupsTx(tx, userID); err == nil && len(gs) > 0 {
			e.GroupName = gs[0]
		}
		if err := tx.Create(&e).Error; err != nil {
			return err
		}
		return tx.Create(&AuditEntry{At: now, Via: auditVia(ctx), Actor: actor, Action: "ledger.credit", Target: "user:" + u.Username, After: jsonText(e)}).Error
	})
	if key != "" && uniqueViolation(err) {
		var prev LedgerEntry
		if err := s.db.WithContext(ctx).Where("idempotency_key = ?", ledgerKey).First(&prev).Error; err != nil {
			return nil, false, err
		}
		if prev.UserID != userID || prev.AmountMicros != -amountMicros || prev.WorkbenchID != workbenchID || prev.Note != reason {
			// A conflict (SPEC §8): the key is well formed but taken.
			return nil, false, &ValidationError{Field: "idempotency_key", Message: "was used for another credit", Taken: true}
		}
		return &prev, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &e, false, nil
}

// ReverseLines appends, for each of ids, a line that cancels it (same
// period, negated seconds and amount, pointing at it), with a reason, and
// audits each, all in one transaction: either every line is reversed or
// none. A line already reversed, or itself a reversal, is refused.
//
// A line of an earlier month is reversed in this one, dated now: that
// month's statements, once exported, stay as they were, and the money
// comes back on this month's statement and budget, as a credit does. It
// gives back the amount only (no seconds): the GPU-hours were used then,
// and this month's GPU-hour limit is not the place to return them.
func (s *Store) ReverseLines(ctx context.Context, ids []int64, reason, actor string) ([]LedgerEntry, error) {
	reason, err := correctionReason(reason)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, invalid("ids", "name at least one ledger line to reverse")
	}
	now := s.now()
	var out []LedgerEntry
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		seen := map[int64]bool{}
		for _, id := range ids {
			if seen[id] {
				return invalid("ids", "line %d is named twice", id)
			}
			seen[id] = true
			var orig LedgerEntry // with its tier, which the reversal answers with
			if err := ledgerLineQuery(tx, id).Take(&orig).Error; err != nil {
				if errors.Is(err, gorm.ErrRecordNotFound) {
					return invalid("ids", "no ledger line %d", id)
				}
				return err
			}
			if orig.Reverses != nil {
				return invalid("ids", "line %d is itself a reversal", id)
			}
			rev := orig
			rev.ID = 0
			rev.IdempotencyKey = fmt.Sprintf("reverse:%d", id)
			rev.Seconds, rev.AmountMicros = -orig.Seconds, -orig.AmountMicros
			rev.Reverses, rev.Note, rev.CreatedBy, rev.CreatedAt = &orig.ID, reason, actor, now
			if orig.PeriodStart.Before(MonthStart(now)) {
				rev.PeriodStart, rev.PeriodEnd, rev.Seconds = now, now, 0
			}
			if err := tx.Create(&rev).Error; err != nil {
				if uniqueViolation(err) {
					return taken("ids", "line %d was already reversed", id)
				}
				return err
			}
			if err := tx.Create(&AuditEntry{At: now, Via: auditVia(ctx), Actor: actor, Action: "ledger.reverse", Target: fmt.Sprintf("ledger:%d", id),
				Before: jsonText(orig), After: jsonText(rev)}).Error; err != nil {
				return err
			}
			out = append(out, rev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// userGroupsTx is UserGroups inside a transaction: the first names the
// group a user's lines are filed under.
func userGroupsTx(tx *gorm.DB, userID int64) ([]string, error) {
	var names []string
	err := tx.Table("groups").Select("groups.name").
		Joins("JOIN group_members gm ON gm.group_id = groups.id").
		Where("gm.user_id = ?", userID).Order("groups.name").Scan(&names).Error
	return names, err
}

// LedgerLine returns one ledger line, with its tier.
func (s *Store) LedgerLine(ctx context.Context, id int64) (*LedgerEntry, error) {
	var e LedgerEntry
	err := ledgerLineQuery(s.db.WithContext(ctx), id).Take(&e).Error
	return &e, notFound(err)
}

// ledgerLineQuery reads ledger line id with its tier (LineTierSQL).
func ledgerLineQuery(db *gorm.DB, id int64) *gorm.DB {
	return db.Table("ledger_entries AS l").Select("l.*, "+LineTierSQL+" AS tier").Joins(LineTierJoin).Where("l.id = ?", id)
}
