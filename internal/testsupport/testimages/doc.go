// Package testimages builds the container images the portal's tests run
// on an engine with no registry access: everything is built locally from
// source, tagged under TestRepoPrefix, and cached by content so repeated
// test runs reuse it.
package testimages

// TestLabel marks the Docker objects a test makes itself (its containers,
// networks, volumes, the images it builds), so leftovers can be found and
// removed. The images this package builds do not carry it: a label in an
// image's config is inherited by every container made from the image and
// every image built or saved from it, and a test portal's workbench
// containers then read as objects the tests made (each object is labelled
// by its own creator: a portal's by its install, runtime.LabelInstall).
const TestLabel = "workbench.test"

// TestRepoPrefix is the repository prefix of every image this package
// builds ("workbench-test/fakejupyter:…"): what finds them
// (`docker images 'workbench-test/*'`), and what nothing made from them
// inherits.
const TestRepoPrefix = "workbench-test/"

// imageFormat is part of the cached images' tags (with their content):
// the images of earlier formats, labelled TestLabel in their config, are
// then rebuilt rather than reused.
const imageFormat = "unlabelled"
