package orchestrator

import (
	"context"
	"errors"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// ErrNoExec is returned when the runtime cannot run processes in a
// container (only test runtimes lack it).
var ErrNoExec = errors.New("this container runtime cannot run commands in a workbench")

// ExecTarget is where a process in a workbench runs: its container, as the
// image's run-as user, in the image's home.
type ExecTarget struct {
	ContainerID string
	User        string
	Home        string
}

// ExecTarget resolves the running container of wb and its image's user.
func (m *Manager) ExecTarget(ctx context.Context, wb *models.Workbench) (ExecTarget, error) {
	if wb.State != models.StateRunning || wb.ContainerID == "" {
		return ExecTarget{}, ErrNotRunning
	}
	img, err := m.store.ImageByID(ctx, wb.ImageID)
	if err != nil {
		return ExecTarget{}, err
	}
	// The user as the container runs it (a bare uid "4242" is "4242:4242"):
	// a uid alone would give the session group 0, root's group, when the
	// image's /etc/passwd does not list it.
	return ExecTarget{ContainerID: wb.ContainerID, User: img.ContainerUser(), Home: img.HomePath}, nil
}

// Exec starts a process in a running workbench (the SSH server's sessions).
func (m *Manager) Exec(ctx context.Context, t ExecTarget, spec runtime.ExecSpec) (*runtime.Exec, error) {
	ex, ok := m.rt.(runtime.Execer)
	if !ok {
		return nil, ErrNoExec
	}
	spec.User = t.User
	if spec.WorkingDir == "" {
		spec.WorkingDir = t.Home
	}
	return ex.Exec(ctx, t.ContainerID, spec)
}

// PathExists reports whether path exists in the workbench's container.
func (m *Manager) PathExists(ctx context.Context, t ExecTarget, path string) bool {
	ex, ok := m.rt.(runtime.Execer)
	return ok && ex.PathExists(ctx, t.ContainerID, path)
}
