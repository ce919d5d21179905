package handlers

import "github.com/gin-gonic/gin"

// calculatorRoutes registers the cost calculator and the cloud price
// catalog (SPEC §7) on the groups Routes builds: ui (logged in), admin
// (/admin, admins), api (/api/v1, logged in) and apiAdmin (/api/v1, admins).
func (h *Handler) calculatorRoutes(ui, admin, api, apiAdmin *gin.RouterGroup) {
	ui.GET("/calculator", h.calculatorPage)
	ui.GET("/calculator.csv", h.calculatorCSV)

	admin.POST("/calculator/apply-rate", h.calculatorApplyRateForm)
	admin.GET("/cloud-prices", h.adminCloudPrices)
	admin.GET("/cloud-prices/new", h.cloudPriceNewForm)
	admin.POST("/cloud-prices", h.cloudPriceCreateForm)
	admin.POST("/cloud-prices/settings", h.calculatorSettingsForm)
	admin.GET("/cloud-prices/:id/edit", h.cloudPriceEditForm)
	admin.POST("/cloud-prices/:id", h.cloudPriceUpdateForm)
	admin.POST("/cloud-prices/:id/delete", h.cloudPriceDeleteForm)

	api.POST("/calculator/estimate", h.apiCalculatorEstimate)
	api.POST("/calculator/tco", h.apiCalculatorTCO)
	api.GET("/cloud-prices", h.apiCloudPrices)

	apiAdmin.POST("/admin/calculator/apply-rate", h.apiCalculatorApplyRate)
	apiAdmin.GET("/admin/calculator/settings", h.apiCalculatorSettings)
	apiAdmin.PUT("/admin/calculator/settings", h.apiCalculatorSettingsPut)
	apiAdmin.POST("/admin/cloud-prices", h.apiCloudPriceCreate)
	apiAdmin.PUT("/admin/cloud-prices/:id", h.apiCloudPriceUpdate)
	apiAdmin.DELETE("/admin/cloud-prices/:id", h.noBody, h.apiCloudPriceDelete)
}
