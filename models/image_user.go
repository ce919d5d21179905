package models

import "strings"

// ContainerUser is the user the engine runs the image's process as. A bare
// uid gets the matching gid ("1000" → "1000:1000"): the engine would
// otherwise run it in group 0, root's group, which opens every root-group
// writable file of the image to the user. A user name keeps the primary
// group the image's /etc/passwd gives it.
func (i *Image) ContainerUser() string { return ContainerUser(i.RunAsUser) }

// ContainerUser maps a run_as_user value as Image.ContainerUser does.
func ContainerUser(runAs string) string {
	runAs = strings.TrimSpace(runAs)
	if runAs != "" && strings.Trim(runAs, "0123456789") == "" {
		return runAs + ":" + runAs
	}
	return runAs
}
