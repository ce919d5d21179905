package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// The checks of "Test image", in the order they run. Each is the step a
// failure is reported under.
const (
	CheckStepImage   = "image"   // the image is here or can be pulled
	CheckStepStart   = "start"   // a container can be made and started
	CheckStepUser    = "user"    // it runs as the configured user
	CheckStepJupyter = "jupyter" // Jupyter answers on {port} under {base_url} with {token}
	CheckStepHome    = "home"    // the home path is writable by that user
)

// CheckSteps lists the steps in order, for pages that show them all.
var CheckSteps = []string{CheckStepImage, CheckStepStart, CheckStepUser, CheckStepJupyter, CheckStepHome}

// kindImageTest labels the containers and volumes of Test image runs.
const kindImageTest = "image-test"

// imageCheckTimeout bounds how long Test image waits for Jupyter: the
// launch's ready timeout, but no more than this.
const imageCheckTimeout = 5 * time.Minute

// checkFailure is a failed check: the step, one plain sentence, the raw
// error or output.
type checkFailure struct {
	step, message, details string
}

func (f *checkFailure) Error() string { return f.message }

func failed(step, details, format string, args ...any) *checkFailure {
	return &checkFailure{step: step, message: sentence(fmt.Sprintf(format, args...)), details: details}
}

// TestImage starts a dry launch of img without GPUs in the background and
// returns its record at once: the image is pulled if missing, started as
// its run-as user on a fresh home volume (prepared as a launch would),
// Jupyter must answer under the base URL with the token, and the home must
// be writable. The record ends passed, or failed with the first failing
// check in one sentence. The run does not depend on the request that asked.
func (m *Manager) TestImage(ctx context.Context, img *models.Image, by string) (*models.ImageCheck, error) {
	if err := m.rt.Ping(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEngineUnavailable, err)
	}
	chk, err := m.store.CreateImageCheck(ctx, img.ID, by)
	if err != nil {
		return nil, err
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		timeout := min(m.opt.ReadyTimeout, imageCheckTimeout) + 10*time.Minute // pulls take their time
		ctx, cancel := context.WithTimeout(m.life, timeout)
		defer cancel()
		state, step, msg, details := models.CheckPassed, "", "", ""
		err := m.runImageCheck(ctx, img, chk.ID, by)
		if m.closing() {
			// Cut by Shutdown: the next start records it as interrupted
			// (failInterruptedImageChecks), not as the image's failure.
			return
		}
		if err != nil {
			state = models.CheckFailed
			var f *checkFailure
			if errors.As(err, &f) {
				step, msg, details = f.step, f.message, f.details
			} else {
				msg, details = "The test could not run: "+err.Error()+".", err.Error()
			}
		} else {
			msg = fmt.Sprintf("All checks passed: the image starts as %s, Jupyter answers under the base URL with the token, and the home %s is writable.",
				img.ContainerUser(), img.HomePath)
		}
		if err := m.store.FinishImageCheck(context.Background(), chk.ID, state, step, msg, details); err != nil {
			m.log.Error("record image test", "image", img.Name, "err", err)
		}
		m.log.Info("image tested", "image", img.Name, "state", state, "step", step, "message", msg)
	}()
	return chk, nil
}

func (m *Manager) runImageCheck(ctx context.Context, img *models.Image, checkID int64, by string) error {
	step := func(s string) {
		if err := m.store.SetImageCheckStep(ctx, checkID, s); err != nil {
			m.log.Warn("image test step", "err", err)
		}
	}
	step(CheckStepImage)
	err := m.rt.EnsureImage(ctx, img.Image, nil)
	m.forgetImages() // it may have pulled
	if err != nil {
		var pe *runtime.PullError
		if errors.As(err, &pe) {
			return failed(CheckStepImage, pe.Details, "%s", pe.AdminReason) // an admin's test
		}
		return failed(CheckStepImage, err.Error(), "the image %s could not be checked: the engine said %v", img.Image, err)
	}

	step(CheckStepStart)
	id := "imagetest-" + strconv.FormatInt(checkID, 10)
	token := models.RandomSecret(32)
	vol, net := m.imageTestVolume(checkID), m.network()
	labels := m.labels("", by)
	labels[runtime.LabelKind] = kindImageTest
	if _, err := m.rt.EnsureVolume(ctx, vol, labels); err != nil {
		return err
	}
	cid := ""
	defer func() {
		// Clean up whatever happened, even if the run's context is done.
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if cid != "" {
			_ = m.rt.Remove(cctx, cid)
		}
		if err := m.rt.RemoveVolume(cctx, vol); err != nil {
			m.log.Warn("remove image test volume", "volume", vol, "err", err)
		}
	}()
	if err := m.rt.EnsureNetwork(ctx, net, m.labels("", by)); err != nil {
		return err
	}
	cmd, err := models.ExpandStartCommand(img.StartCommand, JupyterPort, BaseURL(id), token)
	if err != nil {
		return failed(CheckStepStart, err.Error(), "the start command cannot be split into words: %v", err)
	}
	spec := runtime.Spec{
		WorkbenchID: id, Owner: by, InstallID: m.installID, Name: m.imageTestContainer(checkID),
		Image: img.Image, Cmd: cmd, User: img.ContainerUser(), HomeVolume: vol, HomePath: img.HomePath,
		Env:      []string{"HOME=" + img.HomePath, "JUPYTER_TOKEN=" + token, "WORKBENCH_ID=" + id},
		NanoCPUs: 1e9, MemoryBytes: 2 << 30, ShmBytes: 64 << 20, PidsLimit: m.opt.PidsLimit,
		Network: net, Port: JupyterPort, ExtraLabels: map[string]string{runtime.LabelKind: kindImageTest},
	}
	cid, err = m.rt.Create(ctx, spec)
	if err != nil {
		if strings.Contains(err.Error(), "not a directory") {
			return failed(CheckStepHome, err.Error(), "the home path %s is a file in the image, not a directory: pick another home path", img.HomePath)
		}
		return failed(CheckStepStart, err.Error(), "the engine could not create a container from the image: %v", err)
	}
	if err := m.prepareHome(ctx, cid, img); err != nil {
		st := CheckStepHome
		if strings.Contains(err.Error(), "has no user") {
			st = CheckStepUser
		}
		return failed(st, err.Error(), "%v", err)
	}
	if err := m.rt.Start(ctx, cid); err != nil {
		return startFailure(img, cmd, err)
	}

	step(CheckStepUser)
	wantUID, wantGID, err := m.rt.ResolveUser(ctx, cid, img.ContainerUser())
	if err != nil {
		return failed(CheckStepUser, err.Error(), "the image has no user %q (its run-as user): set Run as user to a numeric uid such as 1000, or to a user in the image's /etc/passwd", img.RunAsUser)
	}
	uid, gid, err := m.rt.ProcessUser(ctx, cid)
	if err != nil {
		if info, ierr := m.rt.Inspect(ctx, cid); ierr == nil && !info.Running {
			return m.exitedFailure(ctx, cid, info)
		}
		// The engine's process list needs the host's ps; where it cannot
		// answer, the engine's own user setting is what the process got
		// (no capability lets it change users).
		m.log.Warn("image test: process user unknown; trusting the engine's user setting", "err", err)
		uid, gid = wantUID, wantGID
	}
	if uid != wantUID || gid != wantGID || uid == 0 {
		return failed(CheckStepUser, "", "the process runs as %d:%d, not as the configured user %s (%d:%d): fix Run as user or the image's entrypoint",
			uid, gid, img.RunAsUser, wantUID, wantGID)
	}

	step(CheckStepJupyter)
	if err := m.checkJupyter(ctx, cid, id, token); err != nil {
		return err
	}

	step(CheckStepHome)
	owner, group, mode, err := m.rt.HomeOwner(ctx, cid, img.HomePath)
	if err != nil {
		return failed(CheckStepHome, err.Error(), "the home path %s could not be read: %v", img.HomePath, err)
	}
	if !writable(uid, gid, owner, group, mode) {
		return failed(CheckStepHome, fmt.Sprintf("owner %d:%d mode %#o", owner, group, mode&0o7777),
			"the home path %s is not writable by %d:%d (it is owned by %d:%d with mode %s): make it writable in the image (chmod u+w) or pick another home path",
			img.HomePath, uid, gid, owner, group, fmtMode(mode))
	}
	return nil
}

// startFailure words an engine refusal to start the container.
func startFailure(img *models.Image, cmd []string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unable to find user") || strings.Contains(msg, "no matching entries in passwd"):
		return failed(CheckStepUser, msg, "the image has no user %q (its run-as user): set Run as user to a numeric uid such as 1000, or to a user in the image's /etc/passwd", img.RunAsUser)
	case strings.Contains(msg, "executable file not found") || strings.Contains(msg, "no such file or directory"):
		return failed(CheckStepJupyter, msg, "the start command's program %s is not in the image, so Jupyter cannot start: check the start command, or use an image with Jupyter", cmd[0])
	case strings.Contains(msg, "permission denied"):
		return failed(CheckStepStart, msg, "the start command's program %s cannot be run by user %s: check the start command and Run as user", cmd[0], img.RunAsUser)
	}
	return failed(CheckStepStart, msg, "the container could not start: %v", err)
}

// checkJupyter waits until Jupyter answers its status API under the base
// URL with the token, telling apart a Jupyter that ignores the base URL or
// the token from one that is not there at all.
func (m *Manager) checkJupyter(ctx context.Context, cid, id, token string) error {
	deadline := time.Now().Add(min(m.opt.ReadyTimeout, imageCheckTimeout))
	var last string
	for {
		info, err := m.rt.Inspect(ctx, cid)
		if err != nil {
			return failed(CheckStepJupyter, err.Error(), "the container vanished while Jupyter was starting")
		}
		if !info.Running {
			return m.exitedFailure(ctx, cid, info)
		}
		if host, port := m.rt.Endpoint(info, m.network()); host != "" {
			base := fmt.Sprintf("http://%s:%d", host, port)
			code, err := m.probe(ctx, base+BaseURL(id)+"api/status", token)
			switch {
			case err == nil && code == http.StatusOK:
				return nil
			case err == nil && (code == http.StatusForbidden || code == http.StatusUnauthorized):
				if c, _ := m.probe(ctx, base+BaseURL(id)+"api/status", ""); c == code {
					return failed(CheckStepJupyter, fmt.Sprintf("GET %sapi/status with the token: %d", BaseURL(id), code),
						"Jupyter answers under the base URL but refuses the token: the start command must pass {token} to Jupyter (for example --IdentityProvider.token={token})")
				}
			case err == nil && code == http.StatusNotFound:
				if c, _ := m.probe(ctx, base+"/api/status", token); c == http.StatusOK || c == http.StatusForbidden {
					return failed(CheckStepJupyter, fmt.Sprintf("GET %sapi/status: 404; GET /api/status: %d", BaseURL(id), c),
						"Jupyter answers at / but not under the base URL %s: the start command must pass {base_url} to Jupyter (for example --ServerApp.base_url={base_url})", BaseURL(id))
				}
			}
			if err != nil {
				last = err.Error()
			} else {
				last = fmt.Sprintf("GET %sapi/status: %d", BaseURL(id), code)
			}
		}
		if time.Now().After(deadline) {
			return failed(CheckStepJupyter, last+m.logTail(ctx, cid),
				"nothing answered as Jupyter on port %d under %s within %s: Jupyter must listen on 0.0.0.0:{port} with base URL {base_url} (for example --ServerApp.ip=0.0.0.0 --ServerApp.port={port})",
				JupyterPort, BaseURL(id), min(m.opt.ReadyTimeout, imageCheckTimeout))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// exitedFailure words a container that ended before the checks were done.
func (m *Manager) exitedFailure(ctx context.Context, cid string, info runtime.ContainerInfo) error {
	return failed(CheckStepJupyter, strings.TrimPrefix(m.logTail(ctx, cid), "; last output: "),
		"the start command exited with code %d before Jupyter answered, so there is no Jupyter to open: check the start command (its last output is in the details)", info.ExitCode)
}

// probe GETs url (with the token when given) and returns the status.
func (m *Manager) probe(ctx context.Context, url, token string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	res, err := m.http.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	return res.StatusCode, nil
}

// writable reports whether uid:gid may create files in a directory owned by
// owner:group with mode (supplementary groups are not considered).
func writable(uid, gid, owner, group int, mode int64) bool {
	switch {
	case uid == 0:
		return true
	case uid == owner:
		return mode&0o300 == 0o300
	case gid == group:
		return mode&0o030 == 0o030
	}
	return mode&0o003 == 0o003
}

// fmtMode writes permission bits as ls does, e.g. "r-xr-xr-x".
func fmtMode(mode int64) string {
	const rwx = "rwxrwxrwx"
	b := []byte("---------")
	for i := range 9 {
		if mode&(1<<(8-i)) != 0 {
			b[i] = rwx[i]
		}
	}
	return string(b)
}

// imageTestVolume and imageTestContainer name what a Test image run makes
// on the engine.
func (m *Manager) imageTestVolume(checkID int64) string {
	return "wb-imagetest-" + m.installID + "-" + strconv.FormatInt(checkID, 10)
}

func (m *Manager) imageTestContainer(checkID int64) string {
	return "wb-" + m.installID + "-imagetest-" + strconv.FormatInt(checkID, 10)
}

// failInterruptedImageChecks closes Test image runs a previous portal
// process left running (their work died with it) and removes what they
// left on the engine: the container (the reconciliation would, after the
// orphan grace) and the throwaway volume (nothing else would).
func (m *Manager) failInterruptedImageChecks(ctx context.Context) {
	ids, err := m.store.FailInterruptedImageChecks(ctx, m.started)
	if err != nil {
		m.log.Warn("close interrupted image tests", "err", err)
	}
	for _, id := range ids {
		if err := m.rt.Remove(ctx, m.imageTestContainer(id)); err != nil {
			m.log.Warn("remove interrupted image test's container", "check", id, "err", err)
			continue
		}
		if err := m.rt.RemoveVolume(ctx, m.imageTestVolume(id)); err != nil {
			m.log.Warn("remove interrupted image test's volume", "check", id, "err", err)
		}
	}
}
