package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"workbench/models"
	"workbench/orchestrator"
)

const userDeleteUsage = "usage: workbench user delete NAME --confirm NAME [--json]"

// cmdUserDelete deletes an account from the shell, as the users page does
// (orchestrator.Accounts: the same refusal of the last administrator, the
// same tombstone deleted-<id> kept for the bills, the same audit row). It
// asks for the name typed again: --confirm NAME, or a prompt when standard
// input is a terminal; a script without --confirm is refused, nothing
// deleted.
//
// It does the database's part at once, whether a portal runs on the data
// directory or not; the engine's part (the account's containers and home
// volume) it leaves to the portal, whose reconciliation finds the
// tombstone: a running portal at its next pass (every
// WORKBENCH_RECONCILE_INTERVAL, 30 s by default), a stopped one when it
// starts. Doing it here would race the running portal, which holds the
// engine's lease (README "Moving or cloning an install").
func cmdUserDelete(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user delete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	confirm := fs.String("confirm", "", "the account's name again, to delete it without a prompt (scripts)")
	asJSON := fs.Bool("json", false, "print the deleted account's record and what was removed as JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(userDeleteUsage)
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	u, err := liveUserNamed(ctx, store, pos[0])
	if err != nil {
		return err
	}
	// Said before the confirmation, as the delete page does: nobody types
	// the name to be told then that it could not be.
	if last, err := store.IsLastAdmin(ctx, u.ID); err != nil {
		return err
	} else if last {
		return lastAdminError(u)
	}
	if err := confirmDelete(ctx, store, u, *confirm, stdin, stderr); err != nil {
		return err
	}
	old := u.Username
	d, err := orchestrator.NewAccounts(store, cliLog(stderr)).Delete(ctx, orchestrator.CommandLine, u)
	if errors.Is(err, models.ErrLastAdmin) { // another admin went meanwhile
		return lastAdminError(u)
	}
	if err != nil {
		return fmt.Errorf("user %q: %w (nothing was deleted)", old, err)
	}
	tomb, err := store.UserByID(ctx, u.ID)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"deleted": old, "user": tomb, "removed": d, "erase_pending": tomb.ErasedAt == nil})
	}
	fmt.Fprintf(stdout, "deleted the account %s; its record stays as %s for its bills and usage\n", old, tomb.Username)
	fmt.Fprintf(stdout, "ended: its sign-ins, %s, %s; %s released\n",
		plural(d.Tokens, "token", "tokens"), plural(d.SSHKeys, "SSH key", "SSH keys"), plural(d.Bookings, "booking", "bookings"))
	if len(d.Groups) > 0 {
		fmt.Fprintf(stdout, "left the groups %s\n", strings.Join(d.Groups, ", "))
	}
	fmt.Fprintf(stdout, "%s removed by the portal "+
		"(now if it is running: at its next reconciliation, every WORKBENCH_RECONCILE_INTERVAL; else at its next start)\n",
		whatGoes(d.Workbenches))
	return nil
}

// whatGoes names what the portal removes of a deleted account: "its home
// volume is", "its workbench, with its container, and its home volume
// are" ("its 0 workbenches, their containers and …" read oddly).
func whatGoes(workbenches int64) string {
	switch workbenches {
	case 0:
		return "its home volume is"
	case 1:
		return "its workbench, with its container, and its home volume are"
	}
	return fmt.Sprintf("its %d workbenches, with their containers, and its home volume are", workbenches)
}

// removesWhat is what deleting an account removes, for the question
// asked before it.
func removesWhat(workbenches int64) string {
	switch workbenches {
	case 0:
		return "its home volume, with its files"
	case 1:
		return "its workbench with its container, and its home volume with its files"
	}
	return fmt.Sprintf("its %d workbenches with their containers, and its home volume with its files", workbenches)
}

// lastAdminError refuses to delete the last administrator who can sign in,
// in one sentence with one colon (models.ErrLastAdmin's own colon after
// this one read "cannot delete admin: this is …: make another …").
func lastAdminError(u *models.User) error {
	return fmt.Errorf("cannot delete %s: it is the last administrator who can sign in; make another user an administrator first, nothing was deleted", u.Username)
}

// confirmDelete is the name typed again: --confirm, else asked on a
// terminal (what goes is listed first, as on the delete page), else
// refused (a script must say it).
func confirmDelete(ctx context.Context, store *models.Store, u *models.User, confirm string, stdin io.Reader, stderr io.Writer) error {
	if confirm != "" {
		if strings.TrimSpace(confirm) != u.Username {
			return fmt.Errorf("--confirm %q is not the account's name, %s; nothing was deleted", confirm, u.Username)
		}
		return nil
	}
	if !isTerminal(stdin) {
		return fmt.Errorf("to delete %s, confirm with --confirm %s (standard input is not a terminal, so nothing can be asked); nothing was deleted", u.Username, u.Username)
	}
	p, err := store.DeletionPreview(ctx, u.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Deleting the account %s removes %s, "+
		"and ends its sign-ins, %s and %s; %s released. Its bills and usage stay under %s.\n",
		u.Username, removesWhat(p.Workbenches), plural(p.Tokens, "token", "tokens"),
		plural(p.SSHKeys, "SSH key", "SSH keys"), plural(p.Bookings, "booking is", "bookings are"), models.DeletedUserKey(u.Username, u.ID))
	fmt.Fprintf(stderr, "Type %s to delete it: ", u.Username)
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the confirmation: %w", err)
	}
	if strings.TrimSpace(line) != u.Username {
		return fmt.Errorf("the name typed is not %s; nothing was deleted", u.Username)
	}
	return nil
}

// isTerminal reports whether r is a terminal, where a person can answer.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// plural is "1 token", "2 tokens", "0 tokens".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
