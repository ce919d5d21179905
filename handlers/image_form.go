package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

func (h *Handler) imageNewForm(c *gin.Context) {
	form := templates.ImageForm{RunAsUser: "1000", HomePath: "/home/jovyan", OpenPath: models.DefaultOpenPath, Enabled: true}
	// ?image= comes from "Add to the catalog" beside an image just loaded
	// from a file; the save validates it like any typed reference.
	if ref := strings.TrimSpace(c.Query("image")); len(ref) <= maxImageRefInForm {
		form.Image = ref
	}
	h.render(c, http.StatusOK, templates.ImageFormPage(h.page(c, trc(c, "New image")), form))
}

// maxImageRefInForm bounds a reference taken from the URL into the form.
const maxImageRefInForm = 255

func (h *Handler) imageEditForm(c *gin.Context) {
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	img, err := h.store.ImageByID(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, templates.ImageFormPage(h.page(c, trc(c, "Edit image")), imageForm(img, nil)))
}

func (h *Handler) imageCreateForm(c *gin.Context) { h.saveImageForm(c, 0) }

func (h *Handler) imageUpdateForm(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	h.saveImageForm(c, id)
}

// saveImageForm creates (id 0) or updates an image from the form; on a bad
// field it shows the form again with what was typed and the message.
func (h *Handler) saveImageForm(c *gin.Context, id int64) {
	img := &models.Image{ID: id, Name: c.PostForm("name"), Image: c.PostForm("image"), Description: c.PostForm("description"),
		Tags: c.PostForm("tags"), StartCommand: c.PostForm("start_command"), RunAsUser: c.PostForm("run_as_user"),
		HomePath: c.PostForm("home_path"), OpenPath: c.PostForm("open_path"), Enabled: c.PostForm("enabled") == "true"}
	typed := *img // Validate normalises img; show back what was typed
	typedPorts := c.PostForm("extra_ports")
	ports, err := models.ParsePortList(typedPorts)
	if err == nil {
		img.ExtraPorts = ports
		_, err = h.saveImage(c, img)
	}
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		title := trc(c, "New image")
		if id != 0 {
			title = trc(c, "Edit image")
		}
		form := imageForm(&typed, fieldErrorsT(c, err))
		form.ExtraPorts = typedPorts
		h.render(c, http.StatusBadRequest, templates.ImageFormPage(h.page(c, title), form))
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.flash(c, trc(c, "Image %s saved.", img.Name))
	h.seeOther(c, "/catalog")
}

// saveImage stores img (create when ID is 0) and audits the change.
func (h *Handler) saveImage(c *gin.Context, img *models.Image) (*models.Image, error) {
	ctx := c.Request.Context()
	var before *models.Image
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		if img.ID == 0 {
			err := tx.CreateImage(ctx, img)
			return auditRec("image.create", img.Name, nil, img), err
		}
		var err error
		if before, err = tx.ImageByID(ctx, img.ID); err != nil {
			return models.AuditRecord{}, err
		}
		err = tx.UpdateImage(ctx, img)
		return auditRec("image.update", img.Name, before, img), err
	})
	return before, err
}

func imageForm(img *models.Image, errs templates.FormErrors) templates.ImageForm {
	return templates.ImageForm{ID: img.ID, Name: img.Name, Image: img.Image, Description: img.Description, Tags: img.Tags,
		StartCommand: img.StartCommand, RunAsUser: img.RunAsUser, HomePath: img.HomePath, OpenPath: img.OpenPath,
		ExtraPorts: templates.PortList(img.ExtraPorts), Enabled: img.Enabled, Errors: errs}
}

func (h *Handler) apiImages(c *gin.Context) {
	u := currentUser(c)
	imgs, err := h.store.ListImages(c.Request.Context(), !u.IsAdmin())
	if !u.IsAdmin() && err == nil {
		imgs, err = h.store.ListImagesFor(c.Request.Context(), u.ID, true)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, mapList(imgs, apiImage))
}

// imageBody is the API's image input; enabled defaults to true.
type imageBody struct {
	Name         string `json:"name"`
	Image        string `json:"image"`
	Description  string `json:"description"`
	Tags         string `json:"tags"`
	StartCommand string `json:"start_command"`
	RunAsUser    string `json:"run_as_user"`
	HomePath     string `json:"home_path"`
	OpenPath     string `json:"open_path"`
	ExtraPorts   []int  `json:"extra_ports"`
	Enabled      *bool  `json:"enabled"`
}

func (b imageBody) image(id int64) *models.Image {
	return &models.Image{ID: id, Name: b.Name, Image: b.Image, Description: b.Description, Tags: b.Tags,
		StartCommand: b.StartCommand, RunAsUser: b.RunAsUser, HomePath: b.HomePath, OpenPath: b.OpenPath,
		ExtraPorts: b.ExtraPorts, Enabled: b.Enabled == nil || *b.Enabled}
}

func (h *Handler) apiImageCreate(c *gin.Context) { h.apiSaveImage(c, 0, http.StatusCreated) }

func (h *Handler) apiImageUpdate(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	h.apiSaveImage(c, id, http.StatusOK)
}

func (h *Handler) apiSaveImage(c *gin.Context, id int64, status int) {
	var body imageBody
	if !h.bindJSON(c, &body) {
		return
	}
	if id != 0 && body.Enabled == nil {
		h.fail(c, errPutEnabled)
		return
	}
	img := body.image(id)
	if _, err := h.saveImage(c, img); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(status, apiImage(img))
}
