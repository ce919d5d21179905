// Package sshgate is the portal's SSH server: `ssh -p PORT <workbench>@portal`
// authenticates with a public key the user registered on the portal and runs
// the session inside the owner's running workbench container, as the
// image's run-as user, through the engine's exec API. No sshd runs in the
// container and no container port is published.
package sshgate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"workbench/models"
	"workbench/orchestrator"
)

// Options configures the server.
type Options struct {
	DataDir string // where the host key lives
	// KeyCheckEvery is how often an open connection checks that its key is
	// still registered and its user still enabled with the credentials they
	// connected with (deleting a key, disabling the account or resetting its
	// password ends its sessions); default 10 s. Revocations made on the
	// portal close them at once through CloseUser; this check catches the
	// rest (another portal process, the command line).
	KeyCheckEvery time.Duration
	// PublicHost is the host name users give ssh (the portal's public
	// URL's), for the command a verified key's message shows; "" names the
	// address the client connected to.
	PublicHost string
	// SettingsURL is the page where users manage their SSH keys (the
	// portal's public URL's /settings/ssh-keys), for the answer to an
	// expired verify code; "" names the page in words.
	SettingsURL string
	// ActivityEvery is the most often one session's traffic is reported
	// as activity to the idle culler (activity.go); default 10 s.
	ActivityEvery time.Duration
}

// Server accepts SSH connections to workbenches.
type Server struct {
	store *models.Store
	mgr   *orchestrator.Manager
	log   *slog.Logger
	opt   Options
	// verifyLimit counts failed verify-<code> attempts by client address.
	verifyLimit *verifyThrottle
	// handshakes bounds the connections not yet authenticated
	// (handshake_limit.go).
	handshakes *handshakeLimit

	mu    sync.Mutex
	conns map[string]map[*ssh.ServerConn]struct{} // workbench id → open connections
}

// New returns a server; nothing listens until Serve.
func New(store *models.Store, mgr *orchestrator.Manager, opt Options, log *slog.Logger) *Server {
	if opt.KeyCheckEvery <= 0 {
		opt.KeyCheckEvery = 10 * time.Second
	}
	if opt.ActivityEvery <= 0 {
		opt.ActivityEvery = 10 * time.Second
	}
	now := time.Now
	if mgr != nil {
		now = mgr.Now // the manager's clock: tests move it
	}
	return &Server{store: store, mgr: mgr, log: log.With("component", "ssh"), opt: opt, conns: map[string]map[*ssh.ServerConn]struct{}{},
		verifyLimit: newVerifyThrottle(store, now), handshakes: newHandshakeLimit()}
}

// Permission extensions carry who authenticated from the auth callback to
// the connection.
const (
	extUserID    = "wb-user-id"
	extKeyID     = "wb-key-id"
	extWorkbench = "wb-id"
	extEpoch     = "wb-auth-epoch"
	// extVerifyKey marks a connection that verifies pending key (its id)
	// and does nothing else (verify.go).
	extVerifyKey = "wb-verify-key-id"
	// extVerifyRefusal marks a verify-<code> connection that verifies
	// nothing and is only told why (its code expired, or its address is
	// out of attempts): the message.
	extVerifyRefusal = "wb-verify-refusal"
)

func (s *Server) config() (*ssh.ServerConfig, error) {
	signer, err := loadHostKey(s.opt.DataDir)
	if err != nil {
		return nil, err
	}
	// PublicKeyCallback is set per connection (handleConn).
	cfg := &ssh.ServerConfig{
		ServerVersion: "SSH-2.0-workbench",
		MaxAuthTries:  6,
	}
	cfg.AddHostKey(signer)
	return cfg, nil
}

// errRefused is the one answer for an unknown key, a disabled user, and a
// workbench that is not the key owner's: which of them is not revealed.
var errRefused = errors.New("permission denied")

// authenticate accepts key only if a user registered and verified it and
// the SSH user name is the id or name of one of that user's workbenches,
// or if the name is verify-<code> of a pending key that key is (verify.go).
//
// It must decide nothing more: x/crypto/ssh calls it for a client's
// unsigned query ("would this key do?") as well, so it is no proof that
// the client holds the private key. Only once NewServerConn has returned
// is the signature checked.
// tries is the connection's verify attempts.
func (s *Server) authenticate(ctx context.Context, meta ssh.ConnMetadata, key ssh.PublicKey, tries *verifyTries) (*ssh.Permissions, error) {
	if perms := s.verifyPermissions(ctx, meta, key, tries); perms != nil {
		return perms, nil
	}
	u, k, err := s.store.UserBySSHKey(ctx, key)
	if err != nil {
		if !errors.Is(err, models.ErrUnknownSSHKey) {
			s.log.Error("ssh key lookup", "err", err)
		}
		return nil, errRefused
	}
	wb, err := s.ownedWorkbench(ctx, u.ID, meta.User())
	if err != nil {
		s.log.Info("ssh refused: no such workbench of the key's owner", "user", u.Username, "target", meta.User(), "remote", meta.RemoteAddr().String())
		return nil, errRefused
	}
	// A workbench named verify-… was no verify attempt.
	s.matched(ctx, tries, strings.ToLower(strings.TrimPrefix(meta.User(), models.SSHVerifyUserPrefix)))
	return &ssh.Permissions{Extensions: map[string]string{
		extUserID: strconv.FormatInt(u.ID, 10), extKeyID: strconv.FormatInt(k.ID, 10), extWorkbench: wb.ID,
		extEpoch: strconv.FormatInt(u.AuthEpoch, 10),
	}}, nil
}

// ownedWorkbench finds ownerID's workbench by id, else by name (names are
// unique per owner).
func (s *Server) ownedWorkbench(ctx context.Context, ownerID int64, target string) (*models.Workbench, error) {
	if wb, err := s.store.WorkbenchByID(ctx, target); err == nil {
		if wb.OwnerID != ownerID {
			return nil, models.ErrNotFound
		}
		return wb, nil
	}
	wbs, err := s.store.ListWorkbenches(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	for i := range wbs {
		if wbs[i].Name == target {
			return &wbs[i], nil
		}
	}
	return nil, models.ErrNotFound
}

// Serve accepts connections on ln until ctx ends; it closes every
// connection to a workbench that leaves the running state.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	cfg, err := s.config()
	if err != nil {
		return err
	}
	updates, unsubscribe := s.mgr.Events().Subscribe("")
	defer unsubscribe()
	go func() {
		for u := range updates {
			if u.State != models.StateRunning {
				s.closeWorkbench(u.ID, "workbench "+u.State)
			}
		}
	}()
	go func() { <-ctx.Done(); ln.Close() }()
	s.log.Info("serving SSH", "addr", ln.Addr().String())
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.closeAll()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return err
		}
		release, ok := s.handshakes.acquire(nc)
		if !ok {
			// Debug only: a flood of these would otherwise flood the log.
			s.log.Debug("ssh connection refused: too many handshakes under way from its address", "remote", nc.RemoteAddr().String())
			nc.Close()
			continue
		}
		go s.handleConn(ctx, nc, cfg, release)
	}
}

// release gives back the connection's handshake slot once the handshake
// has ended.
func (s *Server) handleConn(ctx context.Context, nc net.Conn, base *ssh.ServerConfig, release func()) {
	// A client that never finishes the handshake must not hold a goroutine.
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	cfg := *base
	tries := s.verifyLimit.tries(nc.RemoteAddr())
	cfg.PublicKeyCallback = func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		return s.authenticate(ctx, meta, key, tries)
	}
	conn, chans, reqs, err := ssh.NewServerConn(nc, &cfg)
	release()
	if err != nil {
		nc.Close()
		return
	}
	nc.SetDeadline(time.Time{})
	if ext := conn.Permissions.Extensions; ext[extVerifyKey] != "" || ext[extVerifyRefusal] != "" {
		s.serveVerification(ctx, conn, chans, reqs)
		return
	}
	wbID := conn.Permissions.Extensions[extWorkbench]
	userID, _ := strconv.ParseInt(conn.Permissions.Extensions[extUserID], 10, 64)
	keyID, _ := strconv.ParseInt(conn.Permissions.Extensions[extKeyID], 10, 64)
	epoch, _ := strconv.ParseInt(conn.Permissions.Extensions[extEpoch], 10, 64)
	s.track(wbID, conn, true)
	defer s.track(wbID, conn, false)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.watchAccess(cctx, conn, keyID, userID, epoch)
	go ssh.DiscardRequests(reqs) // no global requests (remote forwarding) are served
	c := &connection{s: s, conn: conn, wbID: wbID, userID: userID, keyID: keyID}
	for nch := range chans {
		switch nch.ChannelType() {
		case "session":
			go c.session(cctx, nch)
		case "direct-tcpip":
			go c.forward(cctx, nch)
		default:
			nch.Reject(ssh.Prohibited, fmt.Sprintf("%s channels are not served by the workbench portal", nch.ChannelType()))
		}
	}
}

// watchAccess ends the connection once its key has been deleted, its user
// disabled or their credentials reset (the user's auth epoch moved on since
// the connection was made), and audits why.
func (s *Server) watchAccess(ctx context.Context, conn *ssh.ServerConn, keyID, userID, epoch int64) {
	t := time.NewTicker(s.keyCheckEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			why, err := s.store.SSHAccessEnded(ctx, keyID, userID, epoch)
			if err != nil || why == "" {
				continue
			}
			s.revoke(ctx, conn, "system", why)
			return
		}
	}
}

// revoke closes conn because its access ended, with an audit row
// (ssh.connection.revoked) naming the workbench, the key and why; by is who
// ended the access ("system" when a connection found out by itself).
func (s *Server) revoke(ctx context.Context, conn *ssh.ServerConn, by, why string) {
	ext := conn.Permissions.Extensions
	keyID, _ := strconv.ParseInt(ext[extKeyID], 10, 64)
	userID, _ := strconv.ParseInt(ext[extUserID], 10, 64)
	s.log.Info("ssh connection closed", "workbench", ext[extWorkbench], "user_id", userID, "key_id", keyID, "why", why)
	if err := s.store.AuditHappened(context.WithoutCancel(ctx), models.AuditRecord{Actor: by, Action: "ssh.connection.revoked", Target: ext[extWorkbench],
		After: map[string]any{"user_id": userID, "key_id": keyID, "why": why, "remote": conn.RemoteAddr().String()}}); err != nil {
		s.log.Error("audit write failed", "action", "ssh.connection.revoked", "err", err)
	}
	conn.Close()
}

// CloseUser closes every open connection of user userID at once (their
// account was disabled or their password reset: the portal calls it right
// after the revocation commits), auditing each with by and why, and
// returns how many it closed.
func (s *Server) CloseUser(userID int64, by, why string) int {
	want := strconv.FormatInt(userID, 10)
	s.mu.Lock()
	var list []*ssh.ServerConn
	for _, set := range s.conns {
		for c := range set {
			if c.Permissions.Extensions[extUserID] == want {
				list = append(list, c)
			}
		}
	}
	s.mu.Unlock()
	for _, c := range list {
		s.revoke(context.Background(), c, by, why)
	}
	return len(list)
}

func (s *Server) track(wbID string, conn *ssh.ServerConn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.conns[wbID]
	if add {
		if set == nil {
			set = map[*ssh.ServerConn]struct{}{}
			s.conns[wbID] = set
		}
		set[conn] = struct{}{}
		return
	}
	delete(set, conn)
	if len(set) == 0 {
		delete(s.conns, wbID)
	}
}

// closeWorkbench ends every connection to workbench id.
func (s *Server) closeWorkbench(id, why string) {
	s.mu.Lock()
	var list []*ssh.ServerConn
	for c := range s.conns[id] {
		list = append(list, c)
	}
	s.mu.Unlock()
	for _, c := range list {
		s.log.Info("ssh connection closed", "workbench", id, "why", why)
		c.Close()
	}
}

func (s *Server) closeAll() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.conns))
	for id := range s.conns {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.closeWorkbench(id, "portal shutting down")
	}
}

// OpenConnections counts the open connections to workbench id (tests, metrics).
func (s *Server) OpenConnections(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns[id])
}

// SetKeyCheckEvery changes how often open connections check their key
// (tests shorten it).
func (s *Server) SetKeyCheckEvery(d time.Duration) {
	s.mu.Lock()
	s.opt.KeyCheckEvery = d
	s.mu.Unlock()
}

func (s *Server) activityEvery() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opt.ActivityEvery
}

func (s *Server) keyCheckEvery() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opt.KeyCheckEvery
}
