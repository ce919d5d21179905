package models

// seededClassDescriptions are the descriptions migration 00045 gives the
// priority classes (a test checks they match what it inserts).
var seededClassDescriptions = []string{
	"a person is waiting: first in the queue, never preempted",
	"long jobs: after interactive work, never preempted",
	"discounted; yields its GPUs to higher classes after a grace period",
}

// SeededAdminName is the display name of the first admin the portal makes.
const SeededAdminName = "Administrator"

// SeededText reports whether s is a text the portal wrote when it seeded
// its catalog or priority classes (not one an administrator wrote): pages
// show such a text in the reader's language while nobody has changed it.
func SeededText(s string) bool {
	for _, img := range defaultImages {
		if s == img.Description {
			return true
		}
	}
	for _, d := range seededClassDescriptions {
		if s == d {
			return true
		}
	}
	return s == SeededAdminName
}
