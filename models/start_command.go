package models

import (
	"fmt"
	"regexp"
	"strings"
)

// Placeholders a start command template may (and must) use.
var requiredPlaceholders = []string{"{port}", "{base_url}", "{token}"}

var placeholderRe = regexp.MustCompile(`\{[^{}]*\}`)

// wholeArgRe is the only way a word may hold a placeholder: the placeholder
// alone, or the whole value of an option. Glued to anything else ("{token};",
// "x{port}") a value could run into text the admin wrote, and the
// workbench would start with an argument Jupyter does not understand.
var wholeArgRe = regexp.MustCompile(`^(-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*=)?\{(port|base_url|token)\}$`)

// ValidateStartCommand checks a Jupyter start command template: it must split
// into words, use {port}, {base_url} and {token}, and nothing else in braces.
// The command runs without a shell, so quoting is limited to '…' and "…".
func ValidateStartCommand(tmpl string) error {
	if strings.TrimSpace(tmpl) == "" {
		return invalid("start_command", "is required")
	}
	if len(tmpl) > 2000 {
		return invalid("start_command", "is too long (2000 characters at most)")
	}
	if strings.ContainsAny(tmpl, "\n\r\x00") {
		return invalid("start_command", "must be one line")
	}
	words, err := splitWords(tmpl)
	if err != nil {
		return invalid("start_command", "%v", err)
	}
	for _, w := range words {
		if placeholderRe.MatchString(w) && !wholeArgRe.MatchString(w) {
			return invalid("start_command", "%q: a placeholder must be a whole argument, alone ({token}) or as an option's value (--token={token})", w)
		}
	}
	for _, p := range placeholderRe.FindAllString(tmpl, -1) {
		known := false
		for _, r := range requiredPlaceholders {
			known = known || p == r
		}
		if !known {
			return invalid("start_command", "unknown placeholder %s (use {port}, {base_url}, {token})", p)
		}
	}
	for _, r := range requiredPlaceholders {
		if !strings.Contains(tmpl, r) {
			return invalid("start_command", "must contain %s so the portal can reach and protect Jupyter", r)
		}
	}
	return nil
}

// ExpandStartCommand splits a validated template into argv and fills in the
// placeholders. Values are substituted after splitting, so a value can never
// add or break words.
func ExpandStartCommand(tmpl string, port int, baseURL, token string) ([]string, error) {
	words, err := splitWords(tmpl)
	if err != nil {
		return nil, err
	}
	r := strings.NewReplacer("{port}", fmt.Sprint(port), "{base_url}", baseURL, "{token}", token)
	for i, w := range words {
		words[i] = r.Replace(w)
	}
	return words, nil
}

// splitWords splits s on spaces, honouring single and double quotes.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote = c
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote %c", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("no command")
	}
	return words, nil
}
