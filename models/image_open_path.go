package models

import (
	"strings"
	"unicode"
)

// DefaultOpenPath is where the Open button goes when an image names no
// other: JupyterLab, as in JupyterHub's default_url.
const DefaultOpenPath = "/lab"

// validateOpenPath checks the path the Open button appends to /wb/{id}. It
// must stay a path on the workbench: no scheme, no host (//), nothing that
// could turn the link into one to another site or break out of the
// attribute it is written into.
func (i *Image) validateOpenPath() error {
	i.OpenPath = strings.TrimSpace(i.OpenPath)
	if i.OpenPath == "" {
		i.OpenPath = DefaultOpenPath
	}
	p := i.OpenPath
	switch {
	case len(p) > 200:
		return invalid("open_path", "is too long (200 characters at most)")
	case !strings.HasPrefix(p, "/"):
		return invalid("open_path", "must start with / (for example /lab, /tree or /vscode/)")
	case strings.Contains(p, "//"):
		return invalid("open_path", "must not contain // (it would point to another host)")
	case strings.Contains(p, `\`):
		return invalid("open_path", `must not contain \ (browsers read it as /)`)
	case strings.Contains(strings.SplitN(strings.SplitN(p, "?", 2)[0], "#", 2)[0], ":"):
		// Harmless after a leading "/", but no tool's path needs it and no
		// reader should mistake it for a scheme.
		return invalid("open_path", "must not contain : before the query (no scheme)")
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return invalid("open_path", "must not contain spaces or control characters")
		}
	}
	return nil
}

// ToolName names the tool an image's Open button opens, from its
// open_path: "JupyterLab" for /lab, "Notebook" for /tree, "VS Code" for
// /vscode/, and so on; "" when the path says nothing known.
func (i *Image) ToolName() string { return ToolName(i.OpenPath) }

// ToolName names the tool served at an open_path (see Image.ToolName).
func ToolName(openPath string) string {
	first := strings.ToLower(strings.SplitN(strings.Trim(strings.SplitN(openPath, "?", 2)[0], "/"), "/", 2)[0])
	switch first {
	case "lab", "":
		return "JupyterLab"
	case "tree", "notebooks":
		return "Notebook"
	case "vscode", "code", "code-server":
		return "VS Code"
	case "rstudio":
		return "RStudio"
	case "desktop":
		return "Desktop"
	}
	return ""
}
