package handlers

import (
	"slices"

	"workbench/models"
)

// The launch form offers what the user's quota lets them launch: images
// outside an allowed list are left out, and flavors the quota rules out
// for good are shown disabled with the reason, as flavors the server
// cannot hold are. The launch itself still checks (CheckLaunchQuota, in
// the transaction that binds the GPUs); the form only spares the user a
// choice that can only be refused.

// imageAllowed reports whether the quota lets the user launch image name.
func imageAllowed(lim models.Limits, name string) bool {
	return lim.AllowedImages == nil || slices.Contains(lim.AllowedImages, name)
}

// quotaRulesOut says why the quota never lets the user launch flavor f
// ("" when it may): not in the allowed flavors, or more GPUs at once than
// the quota allows in all. Limits that free up (the GPUs the user holds
// now, the month's budget) are not checked here: a launch waits for them
// or is told by the launch.
func quotaRulesOut(lim models.Limits, f models.Flavor) string {
	if lim.AllowedFlavors != nil && !slices.Contains(lim.AllowedFlavors, f.Name) {
		return models.Reasonf("your quota does not allow this flavor")
	}
	if qe := models.BeyondQuota(lim, f.GPUCount, f.GPUModel); qe != nil {
		return qe.Message
	}
	return ""
}
