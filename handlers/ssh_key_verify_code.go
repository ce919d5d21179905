package handlers

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// A pending key's verify code is valid for models.SSHVerifyCodeValidFor
// after it was issued; its owner can get a new one (the old one stops
// working) on the SSH keys page or with POST /api/v1/ssh-keys/{id}/verify-code.
// Another user's key id is 404. No password confirmation is asked, unlike
// adding the key: the key was added with one, and a code makes nothing a
// credential by itself; only the holder of the private key, connecting
// with it, can.

func (h *Handler) sshKeyVerifyCode(c *gin.Context) {
	k, ok := h.renewSSHVerifyCode(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	if cmd := h.sshVerifyCommand(c, k); cmd != "" {
		h.flash(c, i18n.T(ctx, "New verification code for key %s: run %s once with that key before %s.", k.Name, cmd, templates.WhenIn(ctx, k.VerifyExpiresAt())))
	} else {
		h.flash(c, i18n.T(ctx, "New verification code for key %s; it is valid until %s.", k.Name, templates.WhenIn(ctx, k.VerifyExpiresAt())))
	}
	h.seeOther(c, "/settings/ssh-keys")
}

// apiSSHKeyVerifyCode: POST /api/v1/ssh-keys/{id}/verify-code, no body;
// answers the key with its new verify_user, verify_command and
// verify_expires_at.
func (h *Handler) apiSSHKeyVerifyCode(c *gin.Context) {
	if k, ok := h.renewSSHVerifyCode(c); ok {
		c.JSON(http.StatusOK, APIItem[APISSHKey]{Item: h.apiSSHKeyOf(c, k)})
	}
}

// renewSSHVerifyCode gives the signed-in user's pending key :id a new
// code, with its audit row (ssh_key.verify_code; the code itself is not
// recorded: it is shown to the key's owner only).
func (h *Handler) renewSSHVerifyCode(c *gin.Context) (*models.SSHKey, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return nil, false
	}
	var k *models.SSHKey
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if k, err = tx.RenewSSHVerifyCode(c.Request.Context(), currentUser(c).ID, id); err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("ssh_key.verify_code", currentUser(c).Username, nil,
			map[string]any{"key_id": k.ID, "name": k.Name, "fingerprint": k.Fingerprint, "verify_expires_at": k.VerifyExpiresAt()}), nil
	})
	if err != nil {
		h.fail(c, err)
		return nil, false
	}
	return k, true
}
