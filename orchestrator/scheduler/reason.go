package scheduler

import "fmt"

// reasonf words a text people read, in English, from a format that is a
// catalog key of the reasons area (see models.Reasonf, which this package
// does not import): pages recognise it and show it translated.
func reasonf(format string, args ...any) string {
	return fmt.Sprintf(format, args...)
}
