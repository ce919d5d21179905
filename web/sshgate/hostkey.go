package sshgate

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
)

// HostKeyFile is the SSH server's private host key, in the data directory.
const HostKeyFile = "ssh_host_ed25519_key"

// loadHostKey reads the host key from dataDir, making it on first use. The
// key is kept so clients' known_hosts stay valid across restarts; it is
// written 0600 because whoever reads it can impersonate the portal.
func loadHostKey(dataDir string) (ssh.Signer, error) {
	path := filepath.Join(dataDir, HostKeyFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		_, priv, gerr := ed25519.GenerateKey(rand.Reader)
		if gerr != nil {
			return nil, gerr
		}
		block, merr := ssh.MarshalPrivateKey(priv, "workbench portal host key")
		if merr != nil {
			return nil, merr
		}
		data = pem.EncodeToMemory(block)
		// O_EXCL: two processes starting together must not both write.
		f, oerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if oerr != nil {
			if errors.Is(oerr, fs.ErrExist) {
				return loadHostKey(dataDir)
			}
			return nil, fmt.Errorf("write SSH host key: %w", oerr)
		}
		if _, werr := f.Write(data); werr != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("write SSH host key: %w", werr)
		}
		if cerr := f.Close(); cerr != nil {
			return nil, cerr
		}
	} else if err != nil {
		return nil, fmt.Errorf("read SSH host key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("SSH host key %s: %w", path, err)
	}
	return signer, nil
}
