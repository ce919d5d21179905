package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"workbench/models"
)

const queueUsage = "usage: workbench queue move ID POSITION [--data-dir DIR]"

// cmdQueue reorders the queue from the shell (issue 12 §6): `queue move ID
// POSITION` moves a queued workbench to POSITION of the queue of its units,
// within its priority class, as the API does; audited as "cli". A running
// portal applies it at its next drain (within --queue-interval).
func cmdQueue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "move" {
		return groupUsage(append([]string{"queue"}, args...), stdout, queueUsage)
	}
	fs := flag.NewFlagSet("queue move", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := dataDirFlag(fs)
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return errors.New(queueUsage)
	}
	position, err := strconv.Atoi(pos[1])
	if err != nil {
		return fmt.Errorf("position %q: give a whole number (1 is the front)", pos[1])
	}
	store, err := openStore(ctx, *dataDir, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	wb, err := store.WorkbenchByID(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("workbench %q: %w", pos[0], err)
	}
	got, err := store.MoveQueued(ctx, wb.ID, position, "cli")
	if errors.Is(err, models.ErrConflict) {
		return fmt.Errorf("workbench %s is %s, not in the queue", wb.Name, wb.State)
	}
	if err != nil {
		return err
	}
	note := ""
	if got != position {
		note = " (its priority class holds the positions around it)"
	}
	fmt.Fprintf(stdout, "moved %s (%s) to position %d%s; the portal applies it at its next drain\n", wb.Name, wb.ID, got, note)
	return nil
}
