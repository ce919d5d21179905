// Command workbench is the self-hosted GPU workbench portal: one binary that
// serves the web UI and API (`serve`) and administers the same data directory
// from the shell (`user add`, `token create`, `gpus`, `backup`), also while a
// server is running on it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `Usage: workbench <command> [flags]

Commands:
  serve                               run the portal (flags or WORKBENCH_* environment)
  user add NAME [--admin] [--password-stdin]
                                      add a user; without --password-stdin a password is generated and printed
  user password NAME [--password-stdin]
                                      set a user's password (a lost admin password); their sessions and tokens end
  user list [--json]                  list the accounts: role, enabled or disabled, how they sign in
  user rename OLD NEW [--json]        rename an account; it keeps its sessions, tokens, workbenches and files
  user delete NAME --confirm NAME [--json]
                                      delete an account (asks for the name on a terminal); the portal
                                      removes its containers and home volume
  token create USER [--name N] [--expires-days D]
                                      create an API token for USER and print it
  gpus [--json]                       print the GPU inventory
  gpus --utilisation [--bucket day|week|month] [--days 30] [--json]
                                      utilisation, idle cost and energy per GPU, unit, model, user, group
  backup [--force] FILE               write a consistent copy of the database to FILE
                                      (--force: replace FILE if it exists)
  image load FILE                     load a docker-save archive into the engine (offline servers)
  egress remove                       delete this install's egress firewall rules (uninstall)
  ledger credit USER AMOUNT --reason R [--workbench ID]
  ledger reverse ID... --reason R     append a correction to the ledger (audited)
  simulate --trace FILE | --synthetic | --from-ledger [--days 30] [--policy P] [--mig GPU:PROFILE] [--svg out.svg]
                                      replay a demand trace (or the last days of real usage) against
                                      the portal's scheduler under each policy
  queue move ID POSITION              move a queued workbench to POSITION of its queue (audited)
  health                              ask the portal on this host whether it serves and can write
                                      its database (exit 0 if so)
  version                             print the version

Run 'workbench <command> --help' for the command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}

// exitCode is the process's exit status for run's error, which it prints:
// `… --help` printed what was asked (flag.ErrHelp) and is no failure.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(stderr, "workbench:", err)
	return 1
}

// groupUsage answers a command group without a valid subcommand: its
// usage on stdout and success when help was asked for (`workbench user
// --help`), else the usage as the error.
func groupUsage(args []string, stdout io.Writer, text string) error {
	if len(args) >= 2 && (args[1] == "-h" || args[1] == "--help" || args[1] == "help") {
		fmt.Fprintln(stdout, text)
		return nil
	}
	return errors.New(text)
}

// run dispatches a command line; it is main without the process around it,
// so tests can call it. A write the data directory's disk refused is told
// with the database's path and what to do (explainUnwritable).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, opened := withOpenedDatabase(ctx)
	return explainUnwritable(dispatch(ctx, args, stdin, stdout, stderr), opened)
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] != "serve" {
		// Not the portal's own work, nor what its users do.
		ctx = withCLIVia(ctx)
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "user":
		switch {
		case len(args) >= 2 && args[1] == "add":
			return cmdUserAdd(ctx, args[2:], stdin, stdout, stderr)
		case len(args) >= 2 && args[1] == "password":
			return cmdUserPassword(ctx, args[2:], stdin, stdout, stderr)
		case len(args) >= 2 && args[1] == "list":
			return cmdUserList(ctx, args[2:], stdout, stderr)
		case len(args) >= 2 && args[1] == "rename":
			return cmdUserRename(ctx, args[2:], stdout, stderr)
		case len(args) >= 2 && args[1] == "delete":
			return cmdUserDelete(ctx, args[2:], stdin, stdout, stderr)
		}
		return groupUsage(args, stdout, "usage: workbench user add NAME [--admin] [--password-stdin] | workbench user password NAME [--password-stdin] | workbench user list [--json]"+
			" | workbench user rename OLD NEW [--json] | workbench user delete NAME --confirm NAME [--json]")
	case "token":
		if len(args) < 2 || args[1] != "create" {
			return groupUsage(args, stdout, "usage: workbench token create USER [--name N] [--expires-days D]")
		}
		return cmdTokenCreate(ctx, args[2:], stdout, stderr)
	case "gpus":
		return cmdGPUs(ctx, args[1:], stdout, stderr)
	case "backup":
		return cmdBackup(ctx, args[1:], stdout, stderr)
	case "egress":
		if len(args) < 2 || args[1] != "remove" {
			return groupUsage(args, stdout, "usage: workbench egress remove [--data-dir DIR]")
		}
		return cmdEgressRemove(ctx, args[2:], stdout, stderr)
	case "image":
		if len(args) < 2 || args[1] != "load" {
			return groupUsage(args, stdout, "usage: workbench image load FILE")
		}
		return cmdImageLoad(ctx, args[2:], stdin, stdout, stderr)
	case "ledger":
		return cmdLedger(ctx, args[1:], stdout, stderr)
	case "simulate":
		return cmdSimulate(ctx, args[1:], stdout, stderr)
	case "queue":
		return cmdQueue(ctx, args[1:], stdout, stderr)
	case "health":
		return cmdHealth(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, versionString())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}
