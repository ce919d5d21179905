package sshgate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The host key is made once, private to the portal's user, and the same
// key comes back after a restart (clients' known_hosts stay valid).
func TestHostKeyMadeOnceAndPrivate(t *testing.T) {
	dir := t.TempDir()
	a, err := loadHostKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, HostKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("host key mode %v; want 0600", st.Mode().Perm())
	}
	b, err := loadHostKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.PublicKey().Marshal(), b.PublicKey().Marshal()) {
		t.Fatal("a second start made a new host key")
	}
	os.WriteFile(filepath.Join(dir, HostKeyFile), []byte("garbage"), 0o600)
	if _, err := loadHostKey(dir); err == nil {
		t.Fatal("a corrupt host key was accepted (it must not be silently replaced)")
	}
}
