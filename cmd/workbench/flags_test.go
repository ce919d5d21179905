package main

import (
	"flag"
	"io"
	"slices"
	"testing"
)

// parseInterspersed takes flags before, between and after the arguments;
// a negative number is an argument, unless it is a flag's value.
func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		pos    []string
		reason string
		admin  bool
	}{
		{[]string{"alice", "--admin"}, []string{"alice"}, "", true},
		{[]string{"ada", "-5", "--reason", "r"}, []string{"ada", "-5"}, "r", false},
		{[]string{"--reason=r", "ada", "-0.5", "-admin"}, []string{"ada", "-0.5"}, "r", true},
		{[]string{"--reason", "-5", "ada"}, []string{"ada"}, "-5", false},
		{[]string{"ada", "--", "--admin", "-x"}, []string{"ada", "--admin", "-x"}, "", false},
		{[]string{"-", "-.5"}, []string{"-", "-.5"}, "", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		reason := fs.String("reason", "", "")
		admin := fs.Bool("admin", false, "")
		pos, err := parseInterspersed(fs, tc.args)
		if err != nil || !slices.Equal(pos, tc.pos) || *reason != tc.reason || *admin != tc.admin {
			t.Errorf("%q: %q reason %q admin %v (%v), want %q reason %q admin %v", tc.args, pos, *reason, *admin, err, tc.pos, tc.reason, tc.admin)
		}
	}
	for _, args := range [][]string{{"ada", "-x"}, {"ada", "--reason"}, {"-5x"}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("reason", "", "")
		if pos, err := parseInterspersed(fs, args); err == nil {
			t.Errorf("%q: %q, want refused", args, pos)
		}
	}
}
