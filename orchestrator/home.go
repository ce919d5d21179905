package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"workbench/models"
)

// prepareHome gives a fresh home volume, mounted in the created container
// cid, to the image's run-as user, so the workbench can write its home
// without running as root or holding any capability (see
// runtime.Docker.PrepareHome for how).
// homeUnpreparedKey marks the context of a launch taken up after the
// process that began it died (reconcile.go, relaunch): the home volume that
// process made may never have been given to the image's user — it was
// fresh then, and is not now — so the launch prepares it again (giving the
// home directory to the user is harmless when it was done).
type homeUnpreparedKey struct{}

func withHomeMayBeUnprepared(ctx context.Context) context.Context {
	return context.WithValue(ctx, homeUnpreparedKey{}, true)
}

func homeMayBeUnprepared(ctx context.Context) bool { return ctx.Value(homeUnpreparedKey{}) != nil }

func (m *Manager) prepareHome(ctx context.Context, cid string, img *models.Image) error {
	if err := m.rt.PrepareHome(ctx, cid, img.HomePath, img.ContainerUser()); err != nil {
		return homeError(img, err)
	}
	return nil
}

// homeError words a failure to set up the home for the admin who can fix
// the image's catalog entry.
func homeError(img *models.Image, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unable to find user") || strings.Contains(msg, "no matching entries in passwd"):
		return fmt.Errorf("the image has no user %q (its run-as user): set Run as user to a numeric uid such as 1000, or to a user in the image's /etc/passwd", img.RunAsUser)
	case strings.Contains(msg, "not a directory"):
		return fmt.Errorf("the home path %s is a file in the image, not a directory: pick another home path", img.HomePath)
	}
	return fmt.Errorf("could not give the home volume to user %s: %v", img.RunAsUser, err)
}
