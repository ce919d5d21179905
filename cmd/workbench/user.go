package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"workbench/models"
)

func cmdUserAdd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	admin := fs.Bool("admin", false, "give the user the admin role")
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	display := fs.String("display-name", "", "display name")
	email := fs.String("email", "", "email address")
	var groups listFlag
	fs.Var(&groups, "group", "an existing group the user joins (repeat it, or NAME,NAME)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: workbench user add NAME [--admin] [--password-stdin] [--group GROUP]...")
	}
	password, err := newPassword(*fromStdin, stdin)
	if err != nil {
		return err
	}
	role := models.RoleUser
	if *admin {
		role = models.RoleAdmin
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	n, err := store.HashNewUser(ctx, models.NewUser{Username: pos[0], Role: role, Password: password, DisplayName: *display, Email: *email})
	var u *models.User
	var gs []*models.Group
	if err == nil {
		// One transaction with its audit rows, as the API's create: an
		// unknown group leaves no account behind.
		err = store.InTx(ctx, func(tx *models.Store) error {
			var err error
			if u, gs, err = tx.CreateUserInGroups(ctx, n, groups); err != nil {
				return err
			}
			if err := tx.Audit(ctx, "cli", "user.create", u.Username, nil, map[string]string{"role": u.Role}); err != nil {
				return err
			}
			for _, g := range gs {
				if err := tx.Audit(ctx, "cli", "group.add_member", g.Name, nil, map[string]string{"username": u.Username}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return fieldError(err, map[string]string{"username": fmt.Sprintf("the user name %q", pos[0]),
			"password": "the password", "email": "--email", "display_name": "--display-name", "groups": "--group"})
	}
	in := ""
	if len(gs) > 0 {
		names := make([]string, len(gs))
		for i, g := range gs {
			names[i] = g.Name
		}
		in = " in " + strings.Join(names, ", ")
	}
	if *fromStdin {
		fmt.Fprintf(stdout, "added %s (%s)%s\n", u.Username, u.Role, in)
	} else {
		fmt.Fprintf(stdout, "added %s (%s)%s with password %s\n", u.Username, u.Role, in, password)
	}
	return nil
}

// listFlag is an option given once per value or with values separated by
// commas (--group ml101 --group ml102, --group ml101,ml102).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, strings.Split(v, ",")...)
	return nil
}

// cmdUserPassword sets a user's password from the shell: how an operator
// who lost the only administrator's password gets back in (the portal has
// no mail-a-reset-link). As the users page's reset does, it ends the
// user's sessions and API and workbench tokens (the old password may be
// known to someone), audited as done by "cli". A running portal sees the
// new password and the ended sessions on the next request; a lock from
// failed logins is in the portal's memory and ends with its lock time or a
// restart.
func cmdUserPassword(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user password", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: workbench user password NAME [--password-stdin]")
	}
	password, err := newPassword(*fromStdin, stdin)
	if err != nil {
		return err
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	u, err := userNamed(ctx, store, pos[0])
	if err != nil {
		return err
	}
	if err := store.SetPassword(ctx, u.ID, password); err != nil {
		return fieldError(err, map[string]string{"password": "the password"})
	}
	_ = store.Audit(ctx, "cli", "user.reset_password", u.Username, nil, nil)
	rev, err := store.RevokeUserAccess(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("password set, but ending %s's sessions failed: %w", u.Username, err)
	}
	_ = store.Audit(ctx, "cli", "user.revoke_access", u.Username, nil, rev)
	ended := fmt.Sprintf("their sessions and %d tokens ended", rev.Tokens)
	if rev.Tokens == 1 {
		ended = "their sessions and 1 token ended"
	}
	if *fromStdin {
		fmt.Fprintf(stdout, "password of %s set; %s\n", u.Username, ended)
	} else {
		fmt.Fprintf(stdout, "password of %s set to %s; %s\n", u.Username, password, ended)
	}
	return nil
}

// newPassword is the first line of stdin (--password-stdin) or, without
// it, a generated password the command prints.
func newPassword(fromStdin bool, stdin io.Reader) (string, error) {
	if !fromStdin {
		return models.RandomSecret(15), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read password: %w", err)
	}
	password := strings.TrimRight(line, "\r\n")
	if password == "" {
		return "", errors.New("--password-stdin: no password on standard input (give it as the first line, e.g. printf '%s\\n' \"$PW\" | workbench …)")
	}
	return password, nil
}

// fieldError words a field's validation error for the command line, naming
// the argument or option that set it (the web form's "username: is already
// taken" reads as a field label): `the user name "ada" is already taken`,
// `--email is not a valid address`. Other errors pass through.
func fieldError(err error, names map[string]string) error {
	var ve *models.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	name, ok := names[ve.Field]
	if !ok {
		name = ve.Field
	}
	if strings.HasPrefix(ve.Message, "is ") || strings.HasPrefix(ve.Message, "must ") {
		return fmt.Errorf("%s %s", name, ve.Message)
	}
	return fmt.Errorf("%s: %s", name, ve.Message)
}

// cmdUserList prints the accounts (an operator on the server, checking who
// can sign in before a restore or after an import): name, role, whether
// disabled, how they sign in, when made; --json prints the records (no
// secrets: the password hash is never marshalled).
func cmdUserList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := noArguments("user list", pos); err != nil {
		return err
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	users, err := store.ListUsers(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if users == nil {
			users = []models.User{}
		}
		return enc.Encode(map[string]any{"items": users})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USERNAME\tROLE\tSTATE\tSIGN-IN\tCREATED")
	for _, u := range users {
		state, signIn := "enabled", "password"
		if u.Deleted() {
			state = "deleted"
		} else if u.Disabled {
			state = "disabled"
		}
		switch {
		case u.Deleted():
			signIn = "none" // its secrets are cleared: nobody signs in as a tombstone
		case u.OIDCSubject != "":
			signIn = "single sign-on"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Username, u.Role, state, signIn, u.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return tw.Flush()
}
