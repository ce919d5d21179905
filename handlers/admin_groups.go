package handlers

import (
	"cmp"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

func (h *Handler) adminGroups(c *gin.Context) {
	h.renderGroups(c, http.StatusOK, templates.GroupsView{})
}

func (h *Handler) renderGroups(c *gin.Context, status int, v templates.GroupsView) {
	ctx := c.Request.Context()
	groups, err := h.store.ListGroups(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	users, err := h.store.ListUsers(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, g := range groups {
		v.Groups = append(v.Groups, templates.GroupRow{ID: g.ID, Name: g.Name, Description: g.Description, Members: g.Members, Leads: g.Leads})
	}
	for _, u := range users {
		if !u.Deleted() {
			v.Usernames = append(v.Usernames, u.Username)
		}
	}
	h.render(c, status, templates.AdminGroupsPage(h.page(c, trc(c, "Groups")), v))
}

func (h *Handler) adminGroupCreate(c *gin.Context) {
	name := c.PostForm("name")
	var g *models.Group
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if g, err = tx.CreateGroup(c.Request.Context(), name, c.PostForm("description")); err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("group.create", g.Name, nil, map[string]string{"name": g.Name, "description": g.Description}), nil
	})
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Name: name, Description: c.PostForm("description"), Errors: templates.FormErrors{ve.Field: trcMsg(c, ve.Message)}})
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Group %s created.", g.Name))
	h.seeOther(c, "/admin/groups")
}

func (h *Handler) adminGroupAddMember(c *gin.Context)    { h.changeMembership(c, true) }
func (h *Handler) adminGroupRemoveMember(c *gin.Context) { h.changeMembership(c, false) }

func (h *Handler) changeMembership(c *gin.Context, add bool) {
	g, ok := h.groupParam(c)
	if !ok {
		return
	}
	gid := g.ID
	username := strings.TrimSpace(c.PostForm("username"))
	if username == "" {
		// Nothing typed: not a user of no name ("There is no user \"\"").
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Member: templates.MemberForm{GroupID: gid,
			Error: trc(c, "Enter a username: pick one from the list.")}})
		return
	}
	u, err := h.liveUserNamed(c.Request.Context(), username)
	if errors.Is(err, models.ErrNotFound) {
		// A name typed (or a user deleted meanwhile): said on the group's
		// own form, with what was typed, not as a missing page.
		h.renderGroups(c, http.StatusBadRequest, templates.GroupsView{Member: templates.MemberForm{GroupID: gid, Username: username,
			Error: trc(c, "There is no user %q: pick a username from the list.", username)}})
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	changed, err := h.setMembership(c, g, u, add)
	switch {
	case err != nil:
		h.fail(c, err)
		return
	case !changed && add:
		h.flash(c, trc(c, "%s is already in %s.", u.Username, g.Name))
		h.seeOther(c, "/admin/groups")
		return
	case !changed:
		h.flash(c, trc(c, "%s is not in %s: nothing to remove.", u.Username, g.Name))
		h.seeOther(c, "/admin/groups")
		return
	}
	if add {
		h.flash(c, trc(c, "%s added to %s.", u.Username, g.Name))
	} else {
		h.flash(c, trc(c, "%s removed from %s.", u.Username, g.Name))
	}
	h.seeOther(c, "/admin/groups")
}

// setMembership adds u to g or removes u from it, audited as
// group.add_member or group.remove_member under the group's name. A change
// that changes nothing (adding a member, removing one who is not) returns
// changed false and leaves no audit row: "stud29 removed from nlp." was
// flashed and audited for a user who was never in it.
func (h *Handler) setMembership(c *gin.Context, g *models.Group, u *models.User, add bool) (changed bool, err error) {
	ctx := c.Request.Context()
	action := "group.remove_member"
	if add {
		action = "group.add_member"
	}
	errNoChange := errors.New("no change")
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		rec := auditRec(action, g.Name, nil, map[string]string{"username": u.Username})
		if member, err := tx.IsGroupMember(ctx, g.ID, u.ID); err != nil || member == add {
			return rec, cmp.Or(err, errNoChange)
		}
		if add {
			return rec, tx.AddGroupMember(ctx, g.ID, u.ID)
		}
		return rec, tx.RemoveGroupMember(ctx, g.ID, u.ID)
	})
	if errors.Is(err, errNoChange) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	h.wbs.QuotasChanged() // the group's quota now applies to them, or no longer does
	return true, nil
}

func (h *Handler) adminAudit(c *gin.Context) {
	ctx := c.Request.Context()
	action, actor := c.Query("action"), c.Query("actor")
	entries, pages, err := pageOf(c, "/admin/audit", func(offset, limit int) ([]models.AuditEntry, int64, error) {
		return h.store.AuditPage(ctx, action, actor, offset, limit)
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.AuditView{Action: action, Actor: actor, Pages: pages}
	for _, e := range entries {
		v.Rows = append(v.Rows, templates.AuditRow{At: templates.WhenIn(c.Request.Context(), &e.At), Actor: e.Actor, Action: e.Action,
			Target: e.Target, Before: e.Before, After: e.After, Via: e.Via})
	}
	h.render(c, http.StatusOK, templates.AdminAuditPage(h.page(c, trc(c, "Audit log")), v))
}
