package sshgate

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"golang.org/x/crypto/ssh"

	"workbench/orchestrator/runtime"
)

// Port forwarding (ssh -L, -W; VS Code Remote-SSH's tunnel) reaches the
// workbench's own ports only: the destination must be localhost, and the
// connection is made from inside the container, so services bound to
// 127.0.0.1 there are reachable and nothing else on the portal's network is.
// The relay is bash's /dev/tcp plus cat, run as the image's user through
// the exec API: images without bash cannot forward.

type directTCPIP struct {
	Host     string
	Port     uint32
	OrigHost string
	OrigPort uint32
}

func localHost(h string) bool { return h == "localhost" || h == "127.0.0.1" || h == "::1" }

const relayScript = `exec 3<>/dev/tcp/127.0.0.1/"$1" || exit 1; cat <&3 & cat >&3; wait`

func (c *connection) forward(ctx context.Context, nch ssh.NewChannel) {
	var d directTCPIP
	if err := ssh.Unmarshal(nch.ExtraData(), &d); err != nil {
		nch.Reject(ssh.ConnectionFailed, "bad forwarding request")
		return
	}
	if !localHost(d.Host) || d.Port == 0 || d.Port > 65535 {
		nch.Reject(ssh.Prohibited, "only the workbench's own ports can be forwarded: use localhost:PORT")
		return
	}
	wb, err := c.s.store.WorkbenchByID(ctx, c.wbID)
	if err != nil || wb.OwnerID != c.userID {
		nch.Reject(ssh.Prohibited, "this workbench no longer exists")
		return
	}
	t, err := c.s.mgr.ExecTarget(ctx, wb)
	if err != nil {
		nch.Reject(ssh.Prohibited, fmt.Sprintf("workbench %q is %s", wb.Name, wb.State))
		return
	}
	if !c.s.mgr.PathExists(ctx, t, "/bin/bash") {
		nch.Reject(ssh.Prohibited, "port forwarding needs bash in the workbench's image")
		return
	}
	ex, err := c.s.mgr.Exec(ctx, t, runtime.ExecSpec{Cmd: []string{"/bin/bash", "-c", relayScript, "relay", strconv.Itoa(int(d.Port))}})
	if err != nil {
		nch.Reject(ssh.ConnectionFailed, "could not reach the workbench")
		return
	}
	defer ex.Close()
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	c.audit(ctx, c.actor(ctx), "ssh.forward", wb.ID, map[string]any{"port": d.Port, "key_id": c.keyID})
	go ssh.DiscardRequests(reqs)
	a := c.newActivity() // a tunnel's traffic counts as a transfer (activity.go)
	go func() {
		io.Copy(ex.Stdin(), activityReader{r: ch, a: a})
		ex.CloseStdin()
	}()
	ex.CopyOutput(false, activityWriter{w: ch, a: a}, io.Discard)
	ch.CloseWrite()
}
