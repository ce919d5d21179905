package models

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// An RSA key under 2048 bits is refused with its size named (a 1024-bit
// key was taken); one of 2048 bits is taken.
func TestWeakRSAKeyRefused(t *testing.T) {
	line := func(bits int) string {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := ssh.NewPublicKey(&k.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " old@laptop"
	}
	_, _, err := ParseSSHPublicKey(line(1024))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "public_key" || !strings.Contains(ve.Message, "1024 bits is too weak") {
		t.Fatalf("a 1024-bit RSA key: %v", err)
	}
	if _, _, err := ParseSSHPublicKey(line(2048)); err != nil {
		t.Fatalf("a 2048-bit RSA key: %v", err)
	}
}
