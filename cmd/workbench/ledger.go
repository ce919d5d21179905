package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"workbench/handlers"
	"workbench/models"
	"workbench/models/pricing"
)

const ledgerUsage = `usage: workbench ledger credit USER AMOUNT --reason R [--workbench ID]
       workbench ledger reverse ID... --reason R`

// ledgerFlags names the arguments a correction's field errors are about.
var ledgerFlags = map[string]string{"reason": "--reason", "workbench_id": "--workbench", "amount": "the amount", "ids": "the line ids"}

// cmdLedger appends corrections (SPEC §6 rule 13) from the shell: a credit
// of AMOUNT (major units, e.g. 12.50) to USER, or the reversal of ledger
// lines by id. Both need a reason, are audited as "cli", and work while a
// server runs on the same data directory.
func cmdLedger(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "credit" && args[0] != "reverse") {
		return groupUsage(append([]string{"ledger"}, args...), stdout, ledgerUsage)
	}
	fs := flag.NewFlagSet("ledger "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	reason := fs.String("reason", "", "why (required)")
	wb := fs.String("workbench", "", "credit: the workbench it is for (optional)")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if args[0] == "credit" && len(pos) == 2 && negativeNumber(pos[1]) {
		// A credit gives money back; there is no negative one (SPEC §6
		// rule 13: corrections are credits or reversals). What takes money
		// back is reversing the line that gave it.
		return fmt.Errorf("amount %s: a credit gives money back, so the amount must be positive (more than 0); "+
			"to take back a credit, reverse its ledger line: workbench ledger reverse ID --reason R", pos[1])
	}
	if strings.TrimSpace(*reason) == "" {
		return fmt.Errorf("--reason is required: a correction says why")
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	if args[0] == "credit" {
		if len(pos) != 2 {
			return fmt.Errorf("%s", ledgerUsage)
		}
		u, err := userNamed(ctx, store, pos[0])
		if err != nil {
			return err
		}
		amount, err := handlers.ParseMajorUnits("amount", pos[1])
		if err != nil {
			var ve *models.ValidationError
			if errors.As(err, &ve) { // its text names the field already
				return fmt.Errorf("amount %q: %s", pos[1], ve.Message)
			}
			return fmt.Errorf("amount %q: %w", pos[1], err)
		}
		e, err := store.Credit(ctx, u.ID, amount, *wb, *reason, "cli")
		if err != nil {
			return fieldError(err, ledgerFlags)
		}
		fmt.Fprintf(stdout, "ledger line %d: credit of %s to %s (%s)\n", e.ID, pricing.FormatExact(amount), u.Username, e.Note)
		return nil
	}
	if len(pos) == 0 {
		return fmt.Errorf("%s", ledgerUsage)
	}
	var ids []int64
	for _, p := range pos {
		id, err := strconv.ParseInt(strings.TrimPrefix(p, "#"), 10, 64)
		if err != nil {
			return fmt.Errorf("ledger line id %q is not a number", p)
		}
		ids = append(ids, id)
	}
	lines, err := store.ReverseLines(ctx, ids, *reason, "cli")
	if err != nil {
		return fieldError(err, ledgerFlags)
	}
	for _, l := range lines {
		fmt.Fprintf(stdout, "ledger line %d reverses %d (%s)\n", l.ID, *l.Reverses, pricing.FormatExact(l.AmountMicros))
	}
	return nil
}
