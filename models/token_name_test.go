package models

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A token's name is printable text: a NUL or an escape sequence reached
// the tokens table of the workbench page as it was. Names of any script
// are fine, counted in characters, not bytes.
func TestTokenNamesArePrintable(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "kai", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"a\x00b", "a\x1b[31mred", "tab\tname", "", "   ", strings.Repeat("x", 65), "bad\xffutf8"} {
		var ve *ValidationError
		if _, _, err := s.CreateToken(ctx, u.ID, bad, time.Hour); !errors.As(err, &ve) || ve.Field != "name" {
			t.Errorf("token name %q: %v, want refused", bad, err)
		}
	}
	for _, good := range []string{"laptop", "VS Code 笔记本", strings.Repeat("令", 64)} {
		if _, _, err := s.CreateToken(ctx, u.ID, good, time.Hour); err != nil {
			t.Errorf("token name %q: %v", good, err)
		}
	}
}
