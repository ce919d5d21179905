// Package templates holds the portal's templ components and the view-model
// structs they render. Components never touch the database: handlers build
// the view models and pass them in.
package templates

// Page is what every page's layout needs.
type Page struct {
	Title string
	Path  string // request path, to mark the active navigation item
	User  *NavUser
	Flash string
	// FlashError marks the flash as an error (red, role=alert) rather
	// than a success.
	FlashError bool
	Banner     string // deployment-wide notice, e.g. "GPUs are simulated"
	Version    string

	// Budget warns of monthly limits at 80% or more; set by the pages
	// where users work (list, workbench, launch form).
	Budget *BudgetWarning
	// PathMode: notebooks are served under /wb/ on the portal's own origin
	// (no notebook domain); admin pages say what that means.
	PathMode bool
}

// NavUser is the logged-in user as the layout shows them.
type NavUser struct {
	Username string
	Name     string
	IsAdmin  bool
}

// NavItem is one entry of the main navigation.
type NavItem struct {
	Label string
	Href  string
	Admin bool
}

// Nav lists the main navigation. Items appear as their features land.
var Nav = []NavItem{
	{Label: "Workbenches", Href: "/"},
	{Label: "GPUs", Href: "/gpus"},
	{Label: "Catalog", Href: "/catalog"},
	{Label: "Usage", Href: "/usage"},
	{Label: "Calculator", Href: "/calculator"},
	{Label: "Admin", Href: "/admin/users", Admin: true},
}

// Active reports whether a nav item is the current section.
func (p Page) Active(href string) bool {
	if href == "/" {
		return p.Path == "/"
	}
	if href == "/admin/users" {
		return len(p.Path) >= 6 && p.Path[:6] == "/admin"
	}
	return p.Path == href || (len(p.Path) > len(href) && p.Path[:len(href)+1] == href+"/")
}

// FormErrors maps a field name to the message shown beside it.
type FormErrors map[string]string

// Has reports whether field has an error.
func (f FormErrors) Has(field string) bool { _, ok := f[field]; return ok }
