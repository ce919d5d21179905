package models

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// argon2id parameters: OWASP's recommendation m=19 MiB, t=2, p=1 (Password
// Storage Cheat Sheet). Until issue 15 they were 64 MiB / 1 pass / 2 lanes:
// with many people logging in at once that held 64 MiB per check (RSS
// 364 MB in a load test) for no gain a portal needs. Hashes made with other
// parameters still verify (the parameters are stored in each hash) and are
// rehashed with these at the user's next successful login (NeedsRehash).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// MinPasswordLength is enforced on every password the portal accepts.
const MinPasswordLength = 10

// HashPassword returns a PHC-format argon2id hash of password. It does not
// wait for the store's hash gate: the store's methods do (hash_gate.go).
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return encodeHash(salt, argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)), nil
}

// encodeHash writes salt and key in the PHC string format with the current
// parameters.
func encodeHash(salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password matches a hash made by HashPassword,
// honouring the parameters stored in the hash so they can be raised later.
func CheckPassword(hash, password string) (bool, error) {
	h, err := parseHash(hash)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1, nil
}

// argonHash is a parsed PHC-format argon2id hash.
type argonHash struct {
	memory, time uint32 // KiB, passes
	threads      uint8
	salt, key    []byte
}

func parseHash(hash string) (argonHash, error) {
	var h argonHash
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return h, errors.New("unknown password hash format")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return h, errors.New("unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &h.threads); err != nil {
		return h, fmt.Errorf("bad argon2 parameters: %w", err)
	}
	b64 := base64.RawStdEncoding
	var err error
	if h.salt, err = b64.DecodeString(parts[4]); err != nil {
		return h, err
	}
	if h.key, err = b64.DecodeString(parts[5]); err != nil {
		return h, err
	}
	return h, nil
}

// NeedsRehash reports whether hash was made with other parameters than the
// current ones (or cannot be read), so a successful login should replace it.
func NeedsRehash(hash string) bool {
	h, err := parseHash(hash)
	return err != nil || h.memory != argonMemory || h.time != argonTime || h.threads != argonThreads ||
		len(h.key) != argonKeyLen || len(h.salt) != argonSaltLen
}

// hashMemory is the memory, in bytes, checking hash takes (its own
// parameters; the current ones if it cannot be read).
func hashMemory(hash string) int64 {
	if h, err := parseHash(hash); err == nil {
		return int64(h.memory) * 1024
	}
	return PasswordCheckMemory()
}

// dummyHash is checked against when a username does not exist, so a login for
// an unknown user costs what one for a known user costs: checking a hash
// runs argon2id with the hash's own parameters, whatever its key. So the
// dummy needs no hashing to make — random salt and key, current parameters —
// and the first unknown-user login does not pay for a second hash.
var dummyHash = sync.OnceValue(func() string {
	salt, key := make([]byte, argonSaltLen), make([]byte, argonKeyLen)
	if _, err := rand.Read(salt); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	if _, err := rand.Read(key); err != nil {
		panic(err)
	}
	return encodeHash(salt, key)
})

func validatePassword(pw string) error {
	if len(pw) < MinPasswordLength {
		return invalid("password", "must be at least %d characters", MinPasswordLength)
	}
	if len(pw) > 1024 {
		return invalid("password", "is too long")
	}
	return passwordHasContent(pw)
}

// randomString returns n random bytes, URL-safe base64 encoded.
func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// RandomSecret returns a new random secret of n bytes (URL-safe text).
func RandomSecret(n int) string { return randomString(n) }
