package main

import (
	"context"
	"fmt"
	"os"
	"os/user"

	"workbench/models"
)

// withCLIVia marks what this command audits as done on the command line by
// the operating system's user (and, under sudo, who ran sudo): the actor
// "cli" alone could not tell two administrators of the server apart, and
// the audit page shows it ("via command line as root, sudo by alice").
func withCLIVia(ctx context.Context) context.Context {
	return models.WithAuditVia(ctx, cliVia(os.Getenv("SUDO_USER")))
}

func cliVia(sudoUser string) string {
	name := "an unknown user"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if sudoUser != "" && sudoUser != name {
		return fmt.Sprintf("command line as %s, sudo by %s", name, sudoUser)
	}
	return "command line as " + name
}
