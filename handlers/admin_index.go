package handlers

import "github.com/gin-gonic/gin"

// adminIndex answers /admin, the address an admin types or bookmarks, with
// the console's first tab, where the header's Admin link also leads. It sits
// behind requireAdmin like every other admin page, so anyone else gets the
// same 401/403 as there.
func (h *Handler) adminIndex(c *gin.Context) {
	h.seeOther(c, "/admin/users")
}
