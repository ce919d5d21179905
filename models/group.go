package models

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"
	"gorm.io/gorm"
)

// Group is a set of users that share quotas and appear together on statements.
type Group struct {
	ID          int64     `gorm:"primaryKey" json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	Members     []string  `gorm:"-" json:"members"`
	// Leads are the members who read the group's statement (SetGroupLead).
	Leads []string `gorm:"-" json:"leads"`
}

var groupNameRe = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}\p{M} _.-]{0,63}$`) // see catalogNameRe

// cleanName is a name as stored and looked up: in NFKC (so "ｖｉｓｉｏｎ"
// is "vision" and a composed "é" the decomposed one), runs of spaces made
// one, trimmed: names that look alike are one name.
// Only spaces are collapsed: a newline or tab stays and is refused.
func cleanName(s string) string {
	return strings.Join(strings.FieldsFunc(norm.NFKC.String(s), func(r rune) bool { return r == ' ' }), " ")
}

// CleanName is a name as the store keeps it (see cleanName), for comparing
// what a person typed with a stored name.
func CleanName(s string) string { return cleanName(s) }

// CreateGroup adds a group.
func (s *Store) CreateGroup(ctx context.Context, name, description string) (*Group, error) {
	name = cleanName(name)
	if name == "" { // not a wrong character: none at all
		return nil, invalid("name", "is required")
	}
	if !groupNameRe.MatchString(name) {
		return nil, invalid("name", "use 1–64 letters, digits, spaces, '.', '_' or '-'")
	}
	g := &Group{Name: name, Description: strings.TrimSpace(description), Members: []string{}, CreatedAt: s.now().UTC()}
	// Its id is above every group's, deleted ones' too (one statement:
	// two creations at once cannot take the same): the ledger names a
	// deleted group by its id, and SQLite gave the id of a deleted newest
	// group to the next one, whose bills then took the deleted group's.
	if err := insertGroup(s.db.WithContext(ctx), g); err != nil {
		if uniqueViolation(err) {
			return nil, taken("name", "a group with this name exists")
		}
		return nil, err
	}
	return g, nil
}

// insertGroup inserts g with an id above every group's, deleted ones'
// too (CreateGroup), and sets g.ID.
func insertGroup(db *gorm.DB, g *Group) error {
	return db.Raw(`INSERT INTO groups (id, name, description, created_at)
		VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM (SELECT id FROM groups UNION ALL SELECT id FROM deleted_groups)), ?, ?, ?) RETURNING id`,
		g.Name, g.Description, g.CreatedAt).Scan(&g.ID).Error
}

// GroupByName returns a group with its members.
func (s *Store) GroupByName(ctx context.Context, name string) (*Group, error) {
	var g Group
	db := s.db.WithContext(ctx)
	if err := db.Where("name = ?", cleanName(name)).First(&g).Error; err != nil {
		return nil, notFound(err)
	}
	var err error
	g.Members, g.Leads, err = membersOf(db, g.ID)
	return &g, err
}

// GroupWithMembers returns a group with its members, by id.
func (s *Store) GroupWithMembers(ctx context.Context, id int64) (*Group, error) {
	g, err := s.GroupByID(ctx, id)
	if err != nil {
		return nil, err
	}
	g.Members, g.Leads, err = membersOf(s.db.WithContext(ctx), id)
	return g, err
}

// membersOf lists the usernames in group id and those of its leads, sorted
// (empty, not nil, for none: the API writes lists).
func membersOf(db *gorm.DB, id int64) (members, leads []string, err error) {
	var rows []struct {
		Username string
		Lead     bool
	}
	err = db.Table("users").Select("users.username, gm.lead").Joins("JOIN group_members gm ON gm.user_id = users.id").
		Where("gm.group_id = ?", id).Order("users.username").Scan(&rows).Error
	members, leads = []string{}, []string{}
	for _, r := range rows {
		members = append(members, r.Username)
		if r.Lead {
			leads = append(leads, r.Username)
		}
	}
	return members, leads, err
}

// GroupByID returns a group without its members.
func (s *Store) GroupByID(ctx context.Context, id int64) (*Group, error) {
	var g Group
	if err := s.db.WithContext(ctx).Where("id = ?", id).First(&g).Error; err != nil {
		return nil, notFound(err)
	}
	return &g, nil
}

// ListGroups returns all groups with their members' usernames.
func (s *Store) ListGroups(ctx context.Context) ([]Group, error) {
	var gs []Group
	if err := s.db.WithContext(ctx).Order("name").Find(&gs).Error; err != nil {
		return nil, err
	}
	var rows []struct {
		GroupID  int64
		Username string
		Lead     bool
	}
	if err := s.db.WithContext(ctx).Table("group_members gm").Select("gm.group_id, u.username, gm.lead").
		Joins("JOIN users u ON u.id = gm.user_id").Order("u.username").Scan(&rows).Error; err != nil {
		return nil, err
	}
	byID := make(map[int64]*Group, len(gs))
	for i := range gs {
		gs[i].Members, gs[i].Leads = []string{}, []string{}
		byID[gs[i].ID] = &gs[i]
	}
	for _, r := range rows {
		if g := byID[r.GroupID]; g != nil {
			g.Members = append(g.Members, r.Username)
			if r.Lead {
				g.Leads = append(g.Leads, r.Username)
			}
		}
	}
	return gs, nil
}

// UserGroups returns the names of the groups userID belongs to.
func (s *Store) UserGroups(ctx context.Context, userID int64) ([]string, error) {
	var names []string
	err := s.db.WithContext(ctx).Table("groups").Select("groups.name").
		Joins("JOIN group_members gm ON gm.group_id = groups.id").
		Where("gm.user_id = ?", userID).Order("groups.name").Scan(&names).Error
	return names, err
}

// AddGroupMember puts a user into a group (no-op if already there), from
// now on: their usage from now goes to it (joinGroup).
func (s *Store) AddGroupMember(ctx context.Context, groupID, userID int64) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return joinGroup(tx, groupID, userID, s.now())
	})
}

// IsGroupMember reports whether a user is in a group.
func (s *Store) IsGroupMember(ctx context.Context, groupID, userID int64) (bool, error) {
	var n int64
	err := s.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM group_members WHERE group_id = ? AND user_id = ?", groupID, userID).Scan(&n)
	return n > 0, err
}

// RemoveGroupMember takes a user out of a group, now: their usage until
// now stays the group's (leaveGroup).
func (s *Store) RemoveGroupMember(ctx context.Context, groupID, userID int64) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return leaveGroup(tx, groupID, userID, s.now())
	})
}

// RenameGroup gives a group another name. Its quotas, caps and priority
// default follow it (they name the group by id), and so do its ledger lines
// in the by-group views (they carry its id); each line keeps the name it
// was written under.
func (s *Store) RenameGroup(ctx context.Context, id int64, name string) error {
	name = cleanName(name)
	if name == "" { // not a wrong character: none at all
		return invalid("name", "is required")
	}
	if !groupNameRe.MatchString(name) {
		return invalid("name", "use 1–64 letters, digits, spaces, '.', '_' or '-'")
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var old Group
		if err := tx.Where("id = ?", id).First(&old).Error; err != nil {
			return notFound(err)
		}
		if err := tx.Model(&Group{}).Where("id = ?", id).Update("name", name).Error; err != nil {
			if uniqueViolation(err) {
				return taken("name", "a group with this name exists")
			}
			return err
		}
		return renameSharedGroup(tx, old.Name, name)
	})
}

// renameSharedGroup follows a group's rename (to "" on its deletion) in
// the share lists of saved images, which name groups: a new group given
// the old name would otherwise see the images shared with the old one,
// and the renamed group's members would lose them.
func renameSharedGroup(tx *gorm.DB, old, name string) error {
	var imgs []Image
	if err := tx.Select("id", "shared_groups").Where("owner_id <> 0 AND shared_groups IS NOT NULL").Find(&imgs).Error; err != nil {
		return err
	}
	for _, img := range imgs {
		i := slices.Index(img.SharedGroups, old)
		if i < 0 {
			continue
		}
		groups := slices.Delete(slices.Clone(img.SharedGroups), i, i+1)
		if name != "" && !slices.Contains(groups, name) {
			groups = slices.Insert(groups, i, name)
		}
		if err := tx.Model(&Image{ID: img.ID}).Select("shared_groups").Updates(&Image{SharedGroups: groups}).Error; err != nil {
			return err
		}
	}
	return nil
}

// SetGroupDescription changes a group's description (at most 200
// characters).
func (s *Store) SetGroupDescription(ctx context.Context, id int64, description string) error {
	description = strings.TrimSpace(description)
	if len([]rune(description)) > 200 {
		return invalid("description", "is too long (at most %d characters)", 200)
	}
	res := s.db.WithContext(ctx).Model(&Group{}).Where("id = ?", id).Update("description", description)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteGroup removes a group with its memberships and what was set for
// it — its quota, its booking cap, its default priority class — in one
// transaction (refused while it has bookings not yet settled), and returns
// it as it was (members included) for the audit row. Ledger lines keep the
// group's name as text: statements of past months still read it.
func (s *Store) DeleteGroup(ctx context.Context, id int64) (*Group, error) {
	var g *Group
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row Group
		if err := tx.Where("id = ?", id).First(&row).Error; err != nil {
			return notFound(err)
		}
		var err error
		if row.Members, row.Leads, err = membersOf(tx, id); err != nil {
			return err
		}
		// Its bookings not yet settled still hold units, or are still to
		// be measured against what its members used.
		var open []int64
		if err := tx.Model(&Reservation{}).Where("group_id = ? AND settled_at IS NULL", id).Order("id").Pluck("id", &open).Error; err != nil {
			return err
		}
		if len(open) > 0 {
			ids := make([]string, len(open))
			for i, b := range open {
				ids[i] = fmt.Sprintf("#%d", b)
			}
			return invalid("group", "the group has GPU bookings not yet over (%s): cancel them first, or delete the group once they are over", strings.Join(ids, ", "))
		}
		for _, del := range []struct {
			model any
			where string
		}{
			{&quotaRow{}, "scope = 'group' AND subject_id = ?"},
			{&ReservationCap{}, "scope = 'group' AND subject_id = ?"},
			{&PriorityDefault{}, "scope = 'group' AND ref_id = ?"},
		} {
			if err := tx.Where(del.where, id).Delete(del.model).Error; err != nil {
				return err
			}
		}
		if err := tx.Exec("DELETE FROM group_members WHERE group_id = ?", id).Error; err != nil {
			return err
		}
		// Its members' usage until now stays its own (the hour in
		// progress, home storage since its last bill): billed later, it
		// still goes to this group, by its id.
		if err := endMemberships(tx, s.now(), "group_id = ?", id); err != nil {
			return err
		}
		if err := tx.Delete(&Group{}, id).Error; err != nil {
			return err
		}
		// Its lines keep its id: the billing pages name it by this
		// (DeletedGroupKeySQL), and no new group gets the id.
		if err := tx.Exec("INSERT INTO deleted_groups (id, name, deleted_at) VALUES (?, ?, ?)", id, row.Name, s.now().UTC()).Error; err != nil {
			return err
		}
		if err := renameSharedGroup(tx, row.Name, ""); err != nil {
			return err
		}
		g = &row
		return nil
	})
	return g, err
}

// DeletedGroup is what is kept of a deleted group: its id (on its ledger
// lines) and the name it had. DeletedAt is nil for a group deleted before
// they were kept (its name is then its newest line's).
type DeletedGroup struct {
	ID        int64
	Name      string
	DeletedAt *time.Time
}

// DeletedGroupByID returns the deleted group id (ErrNotFound: none was).
func (s *Store) DeletedGroupByID(ctx context.Context, id int64) (*DeletedGroup, error) {
	var g DeletedGroup
	if err := s.db.WithContext(ctx).Table("deleted_groups").Where("id = ?", id).Take(&g).Error; err != nil {
		return nil, notFound(err)
	}
	return &g, nil
}

// DeletedGroupKey is the key the usage summaries give the lines of the
// deleted group id, named name (DeletedGroupKeySQL): "ml101 (deleted
// group 7)". The id keeps two deleted groups of one name apart (a course
// group made and deleted each term) and apart from a live group that took
// the name.
func DeletedGroupKey(name string, id int64) string {
	return name + " (deleted group " + strconv.FormatInt(id, 10) + ")"
}
