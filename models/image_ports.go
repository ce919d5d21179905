package models

import (
	"slices"
	"strconv"
	"strings"
)

// JupyterPort is where every workbench's Jupyter listens in its container
// (orchestrator.JupyterPort); it is never an extra port.
const JupyterPort = 8888

// MaxExtraPorts bounds an image's extra ports: each is a button on the
// workbench page.
const MaxExtraPorts = 8

// validateExtraPorts checks the extra HTTP ports: unprivileged (1024–65535,
// apps run as the image's non-root user), not Jupyter's, no repeats; it
// sorts them.
func (i *Image) validateExtraPorts() error {
	if err := validatePorts(i.ExtraPorts); err != nil {
		return err
	}
	if i.ExtraPorts == nil {
		i.ExtraPorts = []int{} // [] in JSON, not null
	}
	slices.Sort(i.ExtraPorts)
	return nil
}

// validatePorts checks a list of extra HTTP ports (an image's or a
// workbench's).
func validatePorts(ports []int) error {
	if len(ports) > MaxExtraPorts {
		return invalid("extra_ports", "at most %d extra ports", MaxExtraPorts)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		switch {
		case p < 1024 || p > 65535:
			return invalid("extra_ports", "port %d: use ports 1024–65535 (apps run as a non-root user)", p)
		case p == JupyterPort:
			return invalid("extra_ports", "port %d is the workbench's own app (Jupyter): its Open button reaches it", p)
		case seen[p]:
			return invalid("extra_ports", "port %d is listed twice", p)
		}
		seen[p] = true
	}
	return nil
}

// ParsePortList reads "6006, 8050" (the image form's field).
func ParsePortList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, invalid("extra_ports", "%q is not a port number; list ports like 6006, 8050", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// HasExtraPort reports whether port is one of the image's extra ports.
func (i *Image) HasExtraPort(port int) bool { return slices.Contains(i.ExtraPorts, port) }
