package models

import (
	"context"
	"math/big"
	"sort"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// Membership over time (migration 00171): usage is billed to the group its
// owner was in while it ran. group_members is the membership now;
// group_memberships keeps each stretch of it, from its join to its end
// (a removal, the group's or the account's deletion). Every change of
// group_members goes through joinGroup, leaveGroup or endMemberships, in
// the transaction of the change, stamped with the store's clock.

// joinGroup makes userID a member of groupID from at (nothing when it is
// one already).
func joinGroup(tx *gorm.DB, groupID, userID int64, at time.Time) error {
	res := tx.Exec("INSERT OR IGNORE INTO group_members (group_id, user_id) VALUES (?, ?)", groupID, userID)
	if res.Error != nil || res.RowsAffected == 0 {
		return res.Error
	}
	return tx.Exec("INSERT OR IGNORE INTO group_memberships (user_id, group_id, from_at) VALUES (?, ?, ?)", userID, groupID, at.UTC()).Error
}

// leaveGroup takes userID out of groupID at at.
func leaveGroup(tx *gorm.DB, groupID, userID int64, at time.Time) error {
	if err := tx.Exec("DELETE FROM group_members WHERE group_id = ? AND user_id = ?", groupID, userID).Error; err != nil {
		return err
	}
	return endMemberships(tx, at, "user_id = ? AND group_id = ?", userID, groupID)
}

// endMemberships ends at at the open stretches that where selects (a
// group's, on its deletion; an account's, on its deletion).
func endMemberships(tx *gorm.DB, at time.Time, where string, args ...any) error {
	return tx.Exec("UPDATE group_memberships SET until_at = ? WHERE until_at IS NULL AND ("+where+")", append([]any{at.UTC()}, args...)...).Error
}

// BillingGroup is the group a user's usage goes to at some time: the first
// of their groups then by name (its name now, or the last it had when it
// was deleted), as the ledger has always filed a user in several groups
// once. ID 0 is no group.
type BillingGroup struct {
	ID      int64
	Name    string
	Deleted bool
}

// IDPtr is the group's id for a line's group_id (nil: no group).
func (g BillingGroup) IDPtr() *int64 {
	if g.ID == 0 {
		return nil
	}
	id := g.ID
	return &id
}

// before orders groups for the choice of a user's billing group: by name,
// then by id (a deleted group and a live one may share a name).
func (g BillingGroup) before(o BillingGroup) bool {
	if g.Name != o.Name {
		return g.Name < o.Name
	}
	return g.ID < o.ID
}

type groupChange struct {
	at    time.Time
	group BillingGroup
}

// GroupTimeline is a user's billing group over time: first (before any
// change), then each change in time order.
type GroupTimeline struct {
	first   BillingGroup
	changes []groupChange
}

// At is the billing group at t.
func (t GroupTimeline) At(at time.Time) BillingGroup {
	g := t.first
	for _, c := range t.changes {
		if c.at.After(at) {
			break
		}
		g = c.group
	}
	return g
}

// GroupPart is the part of a priced span that goes to one group.
type GroupPart struct {
	Group      BillingGroup
	Start, End time.Time
	// Offset is the part's first second within the span (0 for the first
	// part), Seconds its length in the span's seconds.
	Offset, Seconds int64
	Amount          int64
}

// Split divides a priced span — from start to end, seconds long on its
// own second grid (the run's: a line's seconds count from its start),
// amount micro-units — at the changes of group inside it. A second that
// straddles a change goes with the part before it, as at an hour or a rate
// change. Each part gets amount × its seconds / seconds, rounded so that
// the parts add up to amount exactly (the first k seconds get
// ⌊amount·k/seconds⌋ of it). A span with no change inside, or of no
// seconds, is one part.
func (t GroupTimeline) Split(start, end time.Time, seconds, amount int64) []GroupPart {
	parts := []GroupPart{{Group: t.At(start), Start: start, End: end, Seconds: seconds, Amount: amount}}
	if seconds <= 0 {
		return parts
	}
	for _, c := range t.changes {
		if !c.at.After(start) || !c.at.Before(end) {
			continue
		}
		d := c.at.Sub(start)
		k := int64(d / time.Second)
		if d%time.Second != 0 {
			k++
		}
		if k >= seconds {
			continue
		}
		last := &parts[len(parts)-1]
		if last.Group == c.group {
			continue
		}
		if k == last.Offset {
			last.Group = c.group // the part before it has no second
			if n := len(parts); n > 1 && parts[n-2].Group == c.group {
				parts = parts[:n-1]
			}
			continue
		}
		parts = append(parts, GroupPart{Group: c.group, Offset: k})
	}
	for i := range parts {
		p := &parts[i]
		next := seconds
		if i+1 < len(parts) {
			next = parts[i+1].Offset
		}
		p.Seconds = next - p.Offset
		p.Amount = shareOf(amount, next, seconds) - shareOf(amount, p.Offset, seconds)
		p.Start = start.Add(time.Duration(p.Offset) * time.Second)
		if i+1 < len(parts) {
			p.End = start.Add(time.Duration(next) * time.Second)
		} else {
			p.End = end
		}
	}
	return parts
}

// shareOf is ⌊amount·k/n⌋ (toward zero), exact for any int64 amount.
func shareOf(amount, k, n int64) int64 {
	if k == 0 {
		return 0
	}
	if k == n {
		return amount
	}
	p := new(big.Int).Mul(big.NewInt(amount), big.NewInt(k))
	return p.Quo(p, big.NewInt(n)).Int64()
}

// Attribute files each of lines (one user's) under the group its user was
// in during it, split where the group changed inside it (Split). A part
// after the first has the line's idempotency key with ":s" and its offset
// in seconds, so billing the same span again writes the same parts.
func (t GroupTimeline) Attribute(lines []LedgerEntry) []LedgerEntry {
	out := make([]LedgerEntry, 0, len(lines))
	for _, l := range lines {
		for _, p := range t.Split(l.PeriodStart, l.PeriodEnd, l.Seconds, l.AmountMicros) {
			part := l
			part.GroupName, part.GroupID = p.Group.Name, p.Group.IDPtr()
			part.PeriodStart, part.PeriodEnd, part.Seconds, part.AmountMicros = p.Start, p.End, p.Seconds, p.Amount
			if p.Offset > 0 {
				part.IdempotencyKey = l.IdempotencyKey + ":s" + strconv.FormatInt(p.Offset, 10)
			}
			out = append(out, part)
		}
	}
	return out
}

// membershipRow is a stretch of membership with its group's name.
type membershipRow struct {
	UserID  int64
	GroupID int64
	FromAt  *time.Time
	UntilAt *time.Time
	Name    string
	Deleted bool
}

// GroupTimelines returns the billing group over time of each of userIDs
// (a user in no group ever has an empty timeline: no group).
func (s *Store) GroupTimelines(ctx context.Context, userIDs []int64) (map[int64]GroupTimeline, error) {
	return groupTimelines(s.rdb.WithContext(ctx), userIDs)
}

// GroupTimeline is GroupTimelines of one user.
func (s *Store) GroupTimeline(ctx context.Context, userID int64) (GroupTimeline, error) {
	m, err := s.GroupTimelines(ctx, []int64{userID})
	return m[userID], err
}

func groupTimelines(db *gorm.DB, userIDs []int64) (map[int64]GroupTimeline, error) {
	out := make(map[int64]GroupTimeline, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	var rows []membershipRow
	if err := db.Raw(`SELECT m.user_id, m.group_id, m.from_at, m.until_at, COALESCE(g.name, dg.name, '') AS name, g.id IS NULL AS deleted
		FROM group_memberships m LEFT JOIN groups g ON g.id = m.group_id LEFT JOIN deleted_groups dg ON dg.id = m.group_id
		WHERE m.user_id IN ? ORDER BY m.user_id, m.id`, userIDs).Scan(&rows).Error; err != nil {
		return nil, err
	}
	byUser := map[int64][]membershipRow{}
	for _, r := range rows {
		byUser[r.UserID] = append(byUser[r.UserID], r)
	}
	for uid, rs := range byUser {
		out[uid] = timelineOf(rs)
	}
	return out, nil
}

// timelineOf builds a timeline from one user's stretches.
func timelineOf(rows []membershipRow) GroupTimeline {
	// The billing group at t: the first, by name, of the stretches that
	// hold t (from ≤ t < until); nil ends are open.
	at := func(t *time.Time) BillingGroup {
		var best BillingGroup
		for _, r := range rows {
			if t == nil {
				if r.FromAt != nil {
					continue
				}
			} else if (r.FromAt != nil && r.FromAt.After(*t)) || (r.UntilAt != nil && !r.UntilAt.After(*t)) {
				continue
			}
			g := BillingGroup{ID: r.GroupID, Name: r.Name, Deleted: r.Deleted}
			if best.ID == 0 || g.before(best) {
				best = g
			}
		}
		return best
	}
	var edges []time.Time
	for _, r := range rows {
		for _, e := range []*time.Time{r.FromAt, r.UntilAt} {
			if e != nil {
				edges = append(edges, e.UTC())
			}
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].Before(edges[j]) })
	t := GroupTimeline{first: at(nil)}
	cur := t.first
	for i, e := range edges {
		if i > 0 && e.Equal(edges[i-1]) {
			continue
		}
		if g := at(&e); g != cur {
			t.changes = append(t.changes, groupChange{at: e, group: g})
			cur = g
		}
	}
	return t
}

// GroupMembersSince lists the users who were members of groupID at some
// time from since on (members now, and those who left or whose group was
// deleted since): whose usage of a month may go to the group.
func (s *Store) GroupMembersSince(ctx context.Context, groupID int64, since time.Time) ([]int64, error) {
	var rows []membershipRow
	if err := s.rdb.WithContext(ctx).Raw("SELECT user_id, until_at FROM group_memberships WHERE group_id = ? ORDER BY user_id", groupID).
		Scan(&rows).Error; err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range rows {
		if (r.UntilAt == nil || r.UntilAt.After(since)) && (len(ids) == 0 || ids[len(ids)-1] != r.UserID) {
			ids = append(ids, r.UserID)
		}
	}
	return ids, nil
}
