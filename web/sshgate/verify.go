package sshgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"workbench/models"
)

// A key someone adds is pending until its holder connects once as
// verify-<code> with it: the code picks the account's pending key, the
// signature proves the private key. Such a connection verifies the key,
// says so on its session, and ends; it opens no workbench and runs nothing.

// verifyPermissions are the permissions of a verification connection when
// the SSH user name is verify-<code> (nil otherwise: "verify-…" may also
// be a workbench's name). Nothing is verified here: this is asked before
// the client has signed. With code and key naming a pending key, the
// connection verifies it once signed; with its code expired, or with the
// client's address out of attempts (verify_limit.go), it only answers
// why not. A code that names no pending key gets nil, as an unknown key
// does (and counts against the address): the answer reveals no account.
func (s *Server) verifyPermissions(ctx context.Context, meta ssh.ConnMetadata, key ssh.PublicKey, tries *verifyTries) *ssh.Permissions {
	code, ok := strings.CutPrefix(meta.User(), models.SSHVerifyUserPrefix)
	if !ok {
		return nil
	}
	code = strings.ToLower(code)
	ok, wait, err := tries.admit(ctx, code)
	if err != nil {
		// Not counted, so not looked up either: answered as an unknown
		// key is.
		s.log.Error("ssh verify attempts", "err", err)
		return nil
	}
	if !ok {
		if _, _, err := s.store.UserBySSHKey(ctx, key); err == nil {
			// A verified key has nothing to verify: it goes on as a
			// workbench's, should one be named so.
			return nil
		}
		s.log.Info("ssh verify refused: too many attempts", "remote", meta.RemoteAddr().String())
		return refusal(fmt.Sprintf("Too many verification attempts from this address; try again later (in %d min).", int((wait+time.Minute-1)/time.Minute)))
	}
	u, k, err := s.store.PendingSSHKey(ctx, code, key)
	switch {
	case errors.Is(err, models.ErrSSHVerifyCodeExpired):
		s.matched(ctx, tries, code)
		s.log.Info("ssh verify refused: code expired", "key_id", k.ID, "remote", meta.RemoteAddr().String())
		return refusal(s.expiredMessage())
	case errors.Is(err, models.ErrUnknownSSHKey):
		return nil
	case err != nil:
		s.matched(ctx, tries, code) // the portal's failure, not a wrong code
		s.log.Error("ssh pending key lookup", "err", err)
		return nil
	}
	s.matched(ctx, tries, code)
	return &ssh.Permissions{Extensions: map[string]string{
		extVerifyKey: strconv.FormatInt(k.ID, 10), extUserID: strconv.FormatInt(u.ID, 10),
	}}
}

// matched gives code's count back (tries.matched), logging a failure to do so:
// the attempt then stays counted, as a wrong code is.
func (s *Server) matched(ctx context.Context, tries *verifyTries, code string) {
	if err := tries.matched(ctx, code); err != nil {
		s.log.Error("ssh verify attempt not given back", "err", err)
	}
}

// refusal are the permissions of a verify-… connection that is only told
// msg, once the client has signed: it verifies nothing.
func refusal(msg string) *ssh.Permissions {
	return &ssh.Permissions{Extensions: map[string]string{extVerifyRefusal: msg}}
}

// expiredMessage is the answer to a verify-… connection whose code has
// expired; it names no account.
func (s *Server) expiredMessage() string {
	where := "the portal's Settings → SSH keys page"
	if s.opt.SettingsURL != "" {
		where = s.opt.SettingsURL
	}
	return fmt.Sprintf("This verification code has expired (codes are valid for %d hours); nothing was verified. Add the key again or ask for a new code on %s.",
		int(models.SSHVerifyCodeValidFor/time.Hour), where)
}

// verifyAnswerWithin bounds a verification connection: it has nothing to
// do once it has answered.
const verifyAnswerWithin = 30 * time.Second

// serveVerification verifies the connection's key (the handshake is done,
// so the client signed with it) and answers the client's session with the
// outcome.
func (s *Server) serveVerification(ctx context.Context, conn *ssh.ServerConn, chans <-chan ssh.NewChannel, reqs <-chan *ssh.Request) {
	defer conn.Close()
	limit := time.AfterFunc(verifyAnswerWithin, func() { conn.Close() })
	defer limit.Stop()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	go ssh.DiscardRequests(reqs)

	msg, ok := conn.Permissions.Extensions[extVerifyRefusal], false
	if msg == "" {
		msg, ok = s.verify(ctx, conn)
	}
	answered := false
	// Until the client hangs up (closing first could lose the answer in
	// flight) or the limit.
	for nch := range chans {
		if nch.ChannelType() != "session" || answered {
			nch.Reject(ssh.Prohibited, "this connection only verifies an SSH key")
			continue
		}
		answered = true
		go answerVerification(nch, msg, ok)
	}
}

// verify marks the connection's key verified, with its audit row
// (ssh_key.verify), and returns the line to show the client and whether
// it was verified.
func (s *Server) verify(ctx context.Context, conn *ssh.ServerConn) (string, bool) {
	ext := conn.Permissions.Extensions
	keyID, _ := strconv.ParseInt(ext[extVerifyKey], 10, 64)
	userID, _ := strconv.ParseInt(ext[extUserID], 10, 64)
	actor := fmt.Sprintf("user#%d", userID)
	if u, err := s.store.UserByID(ctx, userID); err == nil {
		actor = u.Username
	}
	var k *models.SSHKey
	err := s.mgr.Audited(ctx, actor, func(tx *models.Store) (models.AuditRecord, error) {
		var removed int64
		var err error
		if k, removed, err = tx.VerifySSHKey(ctx, keyID); err != nil {
			return models.AuditRecord{}, err
		}
		return models.AuditRecord{Action: "ssh_key.verify", Target: actor, After: map[string]any{
			"key_id": k.ID, "name": k.Name, "fingerprint": k.Fingerprint, "remote": conn.RemoteAddr().String(),
			"others_pending_removed": removed,
		}}, nil
	})
	switch {
	case errors.Is(err, models.ErrSSHKeyVerifiedElsewhere):
		return "This key was not verified: another account verified it first. Make a new key for yourself (ssh-keygen -t ed25519) and add that one.", false
	case errors.Is(err, models.ErrUnknownSSHKey):
		return "This key was not verified: it was deleted or verified since you connected.", false
	case errors.Is(err, models.ErrSSHVerifyCodeExpired):
		return s.expiredMessage(), false
	case err != nil:
		s.log.Error("ssh key verification", "key_id", keyID, "err", err)
		return "This key could not be verified because of an error on the portal; try again.", false
	}
	s.log.Info("ssh key verified", "user", actor, "key_id", k.ID, "fingerprint", k.Fingerprint, "remote", conn.RemoteAddr().String())
	host, port := s.endpoint(conn)
	// The account is named: a key's holder talked into running someone
	// else's verify command sees whose key it became.
	return fmt.Sprintf("Key %q of account %s verified: ssh -p %s <workbench>@%s now opens %s's workbenches.", k.Name, actor, port, host, actor), true
}

// endpoint is the host and port to ssh to, as the client reached this one.
func (s *Server) endpoint(conn *ssh.ServerConn) (host, port string) {
	host, port, _ = net.SplitHostPort(conn.LocalAddr().String())
	if s.opt.PublicHost != "" {
		host = s.opt.PublicHost
	}
	return host, port
}

// answerVerification answers the session's shell, command or subsystem
// request with msg (stdout and status 0 when verified, else stderr and
// status 1) and closes it; nothing is run.
func answerVerification(nch ssh.NewChannel, msg string, ok bool) {
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	eol := "\n"
	for req := range reqs {
		switch req.Type {
		case "pty-req":
			eol = "\r\n" // the client's terminal is raw
			req.Reply(true, nil)
		case "shell", "exec", "subsystem":
			req.Reply(true, nil)
			w, code := io.Writer(ch), 0
			if !ok {
				w, code = ch.Stderr(), 1
			}
			io.WriteString(w, msg+eol)
			sendExit(ch, code)
			return
		default:
			req.Reply(false, nil)
		}
	}
}
