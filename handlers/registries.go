package handlers

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/runtime"
	"workbench/templates"
)

// Registry mirrors (admin setting used by every pull) and images loaded
// from `docker save` archives, for servers where registries are slow,
// blocked or absent.

// maxImageArchive bounds an uploaded image archive (CUDA images run to
// 20 GB and more); the engine reads it as it arrives, nothing is buffered.
const maxImageArchive = 200 << 30

// Paths that take an image archive: the 1 MiB body limit does not apply.
var imageLoadPaths = map[string]bool{"/admin/images/load": true, "/api/v1/admin/images/load": true}

// adminRegistries: GET /admin/registries.
func (h *Handler) adminRegistries(c *gin.Context) {
	text, err := h.store.RegistryMirrors(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, templates.AdminRegistriesPage(h.page(c, trc(c, "Registries")), templates.RegistriesView{Mirrors: text}))
}

// adminRegistriesSave: POST /admin/registries — the mirrors setting.
func (h *Handler) adminRegistriesSave(c *gin.Context) {
	text := c.PostForm("mirrors")
	if _, err := h.saveMirrors(c, text); err != nil {
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			h.render(c, http.StatusBadRequest, templates.AdminRegistriesPage(h.page(c, trc(c, "Registries")),
				templates.RegistriesView{Mirrors: text, Errors: templates.FormErrors{"mirrors": mirrorErrorT(c, ve.Message)}}))
			return
		}
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Registry mirrors saved: the next pull uses them."))
	h.seeOther(c, "/admin/registries")
}

// saveMirrors checks, stores (in canonical form) and audits the setting.
func (h *Handler) saveMirrors(c *gin.Context, text string) (runtime.Mirrors, error) {
	m, err := runtime.ParseMirrors(text)
	if err != nil {
		return nil, &models.ValidationError{Field: "mirrors", Message: err.Error()}
	}
	ctx := c.Request.Context()
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		before, err := tx.RegistryMirrors(ctx)
		if err != nil {
			return models.AuditRecord{}, err
		}
		return auditRec("registry_mirrors.set", "registries", gin.H{"mirrors": before}, gin.H{"mirrors": m.String()}),
			tx.SetRegistryMirrors(ctx, m.String())
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// apiRegistryMirrors: GET /api/v1/admin/registry-mirrors.
func (h *Handler) apiRegistryMirrors(c *gin.Context) {
	text, err := h.store.RegistryMirrors(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	m, err := runtime.ParseMirrors(text)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"mirrors": m})
}

// apiRegistryMirrorsPut: PUT /api/v1/admin/registry-mirrors
// {"mirrors": {"docker.io": "registry.example.cn"}} — replaces the setting.
func (h *Handler) apiRegistryMirrorsPut(c *gin.Context) {
	var body struct {
		Mirrors map[string]string `json:"mirrors"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	var b strings.Builder
	for k, v := range body.Mirrors {
		b.WriteString(k + " = " + v + "\n")
	}
	m, err := h.saveMirrors(c, b.String())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"mirrors": m})
}

// adminImageLoad: POST /admin/images/load — a `docker save` archive as the
// multipart field "archive", streamed to the engine.
func (h *Handler) adminImageLoad(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxImageArchive)
	mr, err := c.Request.MultipartReader()
	if err != nil {
		h.renderLoadError(c, trc(c, "send the archive as a file upload (multipart/form-data)"))
		return
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			h.renderLoadError(c, trc(c, "choose a file made by docker save"))
			return
		}
		if part.FormName() != "archive" {
			continue
		}
		names, err := h.loadArchive(c, part)
		if err != nil {
			if errors.Is(err, orchestrator.ErrEngineUnavailable) {
				h.fail(c, err)
				return
			}
			h.renderLoadError(c, err.Error())
			return
		}
		text, _ := h.store.RegistryMirrors(c.Request.Context())
		h.render(c, http.StatusOK, templates.AdminRegistriesPage(h.page(c, trc(c, "Registries")),
			templates.RegistriesView{Mirrors: text, Loaded: h.loadedImages(c, names)}))
		return
	}
}

// loadedImages pairs each loaded reference with the catalog image that
// launches it, so the page offers to add the others.
func (h *Handler) loadedImages(c *gin.Context, names []string) []templates.LoadedImage {
	byRef := map[string]string{}
	if imgs, err := h.store.ListImages(c.Request.Context(), false); err == nil {
		for _, img := range imgs {
			byRef[img.Image] = img.Name
		}
	}
	out := make([]templates.LoadedImage, 0, len(names))
	for _, n := range names {
		out = append(out, templates.LoadedImage{Ref: n, InCatalog: byRef[n]})
	}
	return out
}

func (h *Handler) renderLoadError(c *gin.Context, msg string) {
	text, _ := h.store.RegistryMirrors(c.Request.Context())
	h.render(c, http.StatusBadRequest, templates.AdminRegistriesPage(h.page(c, trc(c, "Registries")),
		templates.RegistriesView{Mirrors: text, Errors: templates.FormErrors{"archive": msg}}))
}

// apiImageLoad: POST /api/v1/admin/images/load — the archive as the body
// (`curl --data-binary @image.tar`); answers {"loaded": [names]}.
func (h *Handler) apiImageLoad(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxImageArchive)
	names, err := h.loadArchive(c, c.Request.Body)
	if err != nil {
		if !errors.Is(err, orchestrator.ErrEngineUnavailable) {
			err = newError(http.StatusBadRequest, "invalid_archive", err.Error())
		}
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"loaded": names})
}

// loadArchive hands the archive to the engine and audits what it loaded.
func (h *Handler) loadArchive(c *gin.Context, r io.Reader) ([]string, error) {
	names, err := h.wbs.LoadImage(c.Request.Context(), r)
	if err != nil {
		return nil, err
	}
	h.record(c, "image.load", "images", nil, gin.H{"loaded": names})
	return names, nil
}
