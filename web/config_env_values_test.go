package web_test

import (
	"flag"
	"strings"
	"testing"

	"workbench/web"
)

// bound is a Config as serve makes it from the environment.
func bound(t *testing.T) web.Config {
	t.Helper()
	var c web.Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.BindFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	c.DataDir = t.TempDir()
	return c
}

// A setting that does not read as its type stops the start, quoting what
// was typed: "50G" for the saved-image quota read as -1, which is "no
// limit"; "yes" for a switch read as off; a session time of "12" was
// reported as "-1ns".
func TestConfigRefusesSettingsThatDoNotParse(t *testing.T) {
	for name, value := range map[string]string{
		"WORKBENCH_SAVED_IMAGE_QUOTA_GIB": "50G",
		"WORKBENCH_SESSION_IDLE":          "12",
		"WORKBENCH_NO_BACKFILL":           "maybe",
		"WORKBENCH_HEARTBEAT_INTERVAL":    "soon",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			c := bound(t)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), name+`="`+value+`"`) {
				t.Fatalf("%s=%s: %v, want the start refused quoting the value", name, value, err)
			}
		})
	}
	t.Setenv("WORKBENCH_NO_BACKFILL", "yes")
	if c := bound(t); c.Validate() != nil || !c.Workbenches.NoBackfill {
		t.Fatalf("WORKBENCH_NO_BACKFILL=yes: backfill off = %v", c.Workbenches.NoBackfill)
	}
}
