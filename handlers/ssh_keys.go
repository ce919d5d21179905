package handlers

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// SSH keys: a user's public keys for the portal's SSH server (web/sshgate).
// A key is a credential: adding one asks for sudo, as an API token does.
// A new key is pending until its holder connects once as verify-<code>
// with it (the command is shown to the adding account only): a public key
// is no secret, so pasting one proves nothing. Deleting a key revokes it:
// new connections are refused at once and open ones end within seconds.

func (h *Handler) sshKeysPage(c *gin.Context) {
	h.renderSSHKeys(c, http.StatusOK, templates.SSHKeysView{})
}

func (h *Handler) renderSSHKeys(c *gin.Context, status int, v templates.SSHKeysView) {
	keys, err := h.store.ListSSHKeys(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	v.Host, v.Port = h.sshEndpoint(c)
	ctx, now := c.Request.Context(), h.store.Now()
	for _, k := range keys {
		row := templates.SSHKeyRow{ID: k.ID, Name: k.Name, Fingerprint: k.Fingerprint,
			Created: templates.WhenIn(ctx, &k.CreatedAt), LastUsed: templates.WhenIn(ctx, k.LastUsedAt),
			Pending: !k.Verified()}
		if row.Pending {
			row.VerifyExpires, row.VerifyExpired = templates.WhenIn(ctx, k.VerifyExpiresAt()), k.VerifyExpired(now)
			if !row.VerifyExpired {
				row.VerifyCommand = h.sshVerifyCommand(c, &k)
			}
		}
		v.Keys = append(v.Keys, row)
	}
	h.render(c, status, templates.SSHKeysPage(h.page(c, i18n.T(c.Request.Context(), "SSH keys")), v))
}

// sshEndpoint is the host and port users give ssh: the portal's host name
// (from the public URL, else the request) and the SSH listen port.
func (h *Handler) sshEndpoint(c *gin.Context) (host, port string) {
	if h.cfg.SSHAddr == "" {
		return "", ""
	}
	_, port, _ = net.SplitHostPort(h.cfg.SSHAddr)
	host = c.Request.Host
	if u, err := url.Parse(h.cfg.PublicURL); err == nil && u.Host != "" {
		host = u.Host
	}
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	return host, port
}

// sshVerifyCommand is the command that verifies pending key k, built as
// the page's ssh instructions are ("" for a verified key, or when the
// portal serves no SSH).
func (h *Handler) sshVerifyCommand(c *gin.Context, k *models.SSHKey) string {
	host, port := h.sshEndpoint(c)
	if port == "" || k.VerifyUser() == "" {
		return ""
	}
	return "ssh -p " + port + " " + k.VerifyUser() + "@" + host
}

func (h *Handler) sshKeyCreate(c *gin.Context) {
	name, key := c.PostForm("name"), c.PostForm("public_key")
	k, err := h.createSSHKey(c, name, key)
	if err == nil {
		if cmd := h.sshVerifyCommand(c, k); cmd != "" {
			h.flash(c, i18n.T(c.Request.Context(), "SSH key added. It opens nothing until you prove you hold its private key: run %s once with that key before %s.", cmd, templates.WhenIn(c.Request.Context(), k.VerifyExpiresAt())))
		} else {
			h.flash(c, i18n.T(c.Request.Context(), "SSH key added."))
		}
		h.seeOther(c, "/settings/ssh-keys")
		return
	}
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		// The pasted key is kept in the form: bad input loses nothing.
		h.renderSSHKeys(c, http.StatusBadRequest, templates.SSHKeysView{Name: name, PublicKey: key, Errors: templates.FormErrors{ve.Field: fieldMessage(c.Request.Context(), ve.Message)}})
		return
	}
	h.fail(c, err)
}

func (h *Handler) sshKeyDelete(c *gin.Context) {
	if h.deleteSSHKey(c) {
		h.flash(c, i18n.T(c.Request.Context(), "SSH key deleted; it no longer opens your workbenches."))
		h.seeOther(c, "/settings/ssh-keys")
	}
}

func (h *Handler) deleteSSHKey(c *gin.Context) bool {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return false
	}
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		k, err := tx.DeleteSSHKey(c.Request.Context(), currentUser(c).ID, id)
		if err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("ssh_key.delete", currentUser(c).Username, map[string]any{"key_id": k.ID, "name": k.Name, "fingerprint": k.Fingerprint}, nil), nil
	})
	if err != nil {
		h.fail(c, err)
		return false
	}
	return true
}

func (h *Handler) apiSSHKeys(c *gin.Context) {
	keys, err := h.store.ListSSHKeys(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, mapList(keys, func(k *models.SSHKey) APISSHKey { return h.apiSSHKeyOf(c, k) }))
}

// apiSSHKeyCreate: POST /api/v1/ssh-keys {"name": "...", "public_key": "ssh-ed25519 AAAA..."}.
func (h *Handler) apiSSHKeyCreate(c *gin.Context) {
	var body struct {
		Name      string `json:"name"`
		PublicKey string `json:"public_key"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	if err := sshKeyWithinCallerToken(c); err != nil {
		h.fail(c, err)
		return
	}
	k, err := h.createSSHKey(c, body.Name, body.PublicKey)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, APIItem[APISSHKey]{Item: h.apiSSHKeyOf(c, k)})
}

func (h *Handler) apiSSHKeyDelete(c *gin.Context) {
	if h.deleteSSHKey(c) {
		c.Status(http.StatusNoContent)
	}
}

// apiSSHKeyOf is k as the API shows it to its owner, with the command that
// verifies it while it is pending and its code has not expired.
func (h *Handler) apiSSHKeyOf(c *gin.Context, k *models.SSHKey) APISSHKey {
	out := apiSSHKey(k)
	if k.VerifyExpired(h.store.Now()) {
		out.VerifyUser = ""
		return out
	}
	out.VerifyCommand = h.sshVerifyCommand(c, k)
	return out
}

// createSSHKey adds one of the signed-in user's keys with its audit row.
func (h *Handler) createSSHKey(c *gin.Context, name, key string) (*models.SSHKey, error) {
	var k *models.SSHKey
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if k, err = tx.CreateSSHKey(c.Request.Context(), currentUser(c).ID, name, key); err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("ssh_key.create", currentUser(c).Username, nil, map[string]any{"key_id": k.ID, "name": k.Name, "fingerprint": k.Fingerprint}), nil
	})
	return k, err
}
