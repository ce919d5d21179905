// Package templates holds the portal's templ components and the view-model
// structs they render. Components never touch the database: handlers build
// the view models and pass them in.
package templates

import (
	"github.com/a-h/templ"

	"workbench/templates/i18n"
)

// Page is what every page's layout needs.
type Page struct {
	Title string
	Path  string // request path, to mark the active navigation item
	// Here is the request's path and query, where the language switch
	// returns to.
	Here  string
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
	// Unread counts the user's notifications not yet seen (a GPU or a
	// flavor they watch came free): the top bar links them.
	Unread int64
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

// Language is one choice of the header's language switch.
type Language struct {
	Tag  string // BCP 47, as i18n.Locale.Lang prints it
	Name string // the language's name in itself
}

// Languages are the choices of the language switch.
var Languages = []Language{{Tag: "en", Name: "English"}, {Tag: "zh-CN", Name: "中文"}}

// Nav lists the main navigation (labels are catalog keys, translated when
// the layout prints them). Items appear as their features land.
var Nav = []NavItem{
	{Label: i18n.Key("Workbenches"), Href: "/"},
	{Label: i18n.Key("GPUs"), Href: "/gpus"},
	{Label: i18n.Key("Catalog"), Href: "/catalog"},
	{Label: i18n.Key("Usage"), Href: "/usage"},
	{Label: i18n.Key("Calculator"), Href: "/calculator"},
	{Label: i18n.Key("Admin"), Href: "/admin/users", Admin: true},
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

// fieldErrorAttrs marks a control whose field has an error as invalid and
// describes it by FieldError's message ("error-" + field), in the markup:
// a screen reader says what is wrong without JavaScript too (app.js did
// it alone, and missed a control named otherwise than its error, such as
// idle_minutes for idle_timeout). None when the field is fine.
func fieldErrorAttrs(errs FormErrors, field string) templ.Attributes {
	if !errs.Has(field) {
		return templ.Attributes{}
	}
	return templ.Attributes{"aria-invalid": "true", "aria-describedby": "error-" + field}
}
