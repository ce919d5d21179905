// Package testimages builds the container images the portal's tests run
// on an engine with no registry access: everything is built locally from
// source, labelled TestLabel, and cached by content so repeated test runs
// reuse it.
package testimages

// TestLabel marks every image (and, by convention, every other Docker
// object) created for tests, so leftovers can be found and removed.
const TestLabel = "workbench.test"
