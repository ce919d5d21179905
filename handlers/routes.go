package handlers

import (
	"github.com/gin-gonic/gin"
)

// Routes registers every route of the portal on r: the one route table.
func (h *Handler) Routes(r *gin.Engine) {
	r.GET("/healthz", h.healthz)
	r.Use(h.loadUser)

	r.GET("/login", h.loginForm)
	r.POST("/login", h.login)
	r.POST("/logout", h.logout)

	ui := r.Group("/", h.requireUser)
	ui.GET("/", h.home)
	ui.GET("/gpus", h.gpuPage)
	ui.GET("/catalog", h.catalogPage)
	ui.GET("/settings/tokens", h.tokensPage)
	ui.POST("/settings/tokens", h.tokenCreate)
	ui.POST("/settings/tokens/:id/revoke", h.tokenRevoke)

	admin := r.Group("/admin", h.requireAdmin)
	admin.GET("/users", h.adminUsers)
	admin.POST("/users", h.adminUserCreate)
	admin.POST("/users/:id/disable", h.adminUserDisable)
	admin.POST("/users/:id/password", h.adminUserPassword)
	admin.GET("/groups", h.adminGroups)
	admin.POST("/groups", h.adminGroupCreate)
	admin.POST("/groups/:id/members", h.adminGroupAddMember)
	admin.POST("/groups/:id/members/remove", h.adminGroupRemoveMember)
	admin.GET("/audit", h.adminAudit)
	admin.POST("/gpus/:uuid/drain", h.gpuDrainForm)
	admin.GET("/images/new", h.imageNewForm)
	admin.POST("/images", h.imageCreateForm)
	admin.GET("/images/:id/edit", h.imageEditForm)
	admin.POST("/images/:id", h.imageUpdateForm)
	admin.GET("/flavors/new", h.flavorNewForm)
	admin.POST("/flavors", h.flavorCreateForm)
	admin.GET("/flavors/:id/edit", h.flavorEditForm)
	admin.POST("/flavors/:id", h.flavorUpdateForm)

	api := r.Group("/api/v1", h.requireUser)
	api.GET("/me", h.apiMe)
	api.GET("/gpus", h.apiGPUs)
	api.GET("/images", h.apiImages)
	api.GET("/flavors", h.apiFlavors)
	api.GET("/tokens", h.apiTokens)
	api.POST("/tokens", h.apiTokenCreate)
	api.DELETE("/tokens/:id", h.apiTokenRevoke)

	apiAdmin := r.Group("/api/v1", h.requireAdmin)
	apiAdmin.POST("/images", h.apiImageCreate)
	apiAdmin.PUT("/images/:id", h.apiImageUpdate)
	apiAdmin.POST("/flavors", h.apiFlavorCreate)
	apiAdmin.PUT("/flavors/:id", h.apiFlavorUpdate)
	apiAdmin.PUT("/gpus/:uuid/drain", h.apiGPUDrain)
	apiAdmin.GET("/admin/users", h.apiUsers)
	apiAdmin.POST("/admin/users", h.apiUserCreate)

	r.NoRoute(func(c *gin.Context) { h.fail(c, errNotFound) })
	r.NoMethod(func(c *gin.Context) { h.fail(c, newError(405, "method_not_allowed", "method not allowed")) })
}
