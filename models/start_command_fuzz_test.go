package models

import (
	"encoding/base64"
	"strings"
	"testing"
)

// shellTokens are words a shell would treat as syntax. The start command
// runs without a shell, but a word like ";" in argv still means the admin
// wrote it: no value the portal fills in may produce one.
var shellTokens = []string{";", "&", "&&", "|", "||", ">", ">>", "<", "`", "$(", ")", "(", "\n"}

// FuzzStartCommand: for any template the validator accepts and any values
// (a token or base URL full of quotes, spaces and shell syntax):
//   - expansion gives as many words as the template has, never more or fewer;
//   - a word without a placeholder comes out exactly as the admin wrote it;
//   - a word with one is the placeholder alone or "--opt=" and the value, so
//     {token} stays its own argument;
//   - with the values the portal really fills in (a base URL /wb/{id}/ and a
//     URL-safe token), a shell token appears as a whole word only where the
//     template has it.
func FuzzStartCommand(f *testing.F) {
	for _, seed := range []struct{ tmpl, token, base string }{
		{"jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}", "abc", "/wb/x/"},
		{"/fakejupyter --ip=0.0.0.0 --port={port} --base-url={base_url} --token={token}", "; rm -rf /", "/wb/y/"},
		{`jupyter lab "--name=my lab" {port} {base_url} {token}`, "a b", "/wb/z/ && id"},
		{"jupyter {port} {base_url} {token};", "t", "/"},
		{"jupyter {port} {base_url} x{token}", "t", "/"},
		{"jupyter '{port}' \"{base_url}\" {token} ; echo", "$(id)", "`id`"},
		{"jupyter {port} {base_url} {token} {evil}", "t", "/"},
		{"jupyter --a={port}{token} {base_url}", "t", "/"},
	} {
		f.Add(seed.tmpl, seed.token, seed.base)
	}
	f.Fuzz(func(t *testing.T, tmpl, token, base string) {
		if ValidateStartCommand(tmpl) != nil {
			return
		}
		words, err := splitWords(tmpl)
		if err != nil {
			t.Fatalf("validated template does not split: %v", err)
		}
		argv, err := ExpandStartCommand(tmpl, 8888, base, token)
		if err != nil {
			t.Fatalf("validated template does not expand: %v", err)
		}
		if len(argv) != len(words) {
			t.Fatalf("%q with token %q, base %q: %d words, template has %d: %q", tmpl, token, base, len(argv), len(words), argv)
		}
		values := map[string]string{"{port}": "8888", "{base_url}": base, "{token}": token}
		for i, w := range words {
			m := wholeArgRe.FindStringSubmatch(w)
			switch {
			case !placeholderRe.MatchString(w):
				if argv[i] != w {
					t.Fatalf("word %d %q came out as %q", i, w, argv[i])
				}
			case m == nil:
				t.Fatalf("validator accepted %q with placeholder word %q that is not a whole argument", tmpl, w)
			default:
				prefix := m[1]
				if want := prefix + values["{"+m[2]+"}"]; argv[i] != want {
					t.Fatalf("word %d %q came out as %q, want %q", i, w, argv[i], want)
				}
			}
		}
		// The values the portal uses: a base URL of its own ids, a random
		// URL-safe token.
		real, err := ExpandStartCommand(tmpl, 8888, "/wb/"+portalID(base)+"/", base64.RawURLEncoding.EncodeToString([]byte(token)))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range words {
			for _, st := range shellTokens {
				if real[i] == st && w != st {
					t.Fatalf("shell token %q appeared as word %d, which the admin wrote as %q", st, i, w)
				}
			}
		}
		if strings.Contains(tmpl, "{token}") && !containsWordWith(argv, token) {
			t.Fatalf("the token is not in any argument: %q", argv)
		}
	})
}

// portalID maps any string onto the alphabet of workbench ids.
func portalID(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' {
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

func containsWordWith(argv []string, v string) bool {
	for _, a := range argv {
		if strings.HasSuffix(a, v) {
			return true
		}
	}
	return false
}
