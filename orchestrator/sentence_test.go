package orchestrator

import "testing"

// A failure reason is made a sentence; one that starts with a name (a
// registry, an image reference) keeps the name as written.
func TestSentence(t *testing.T) {
	for in, want := range map[string]string{
		"this server's disk is full":       "This server's disk is full.",
		"the image x does not exist on y.": "The image x does not exist on y.",
		"ghcr.io refused to hand out ghcr.io/a/b:1 (it needs credentials, or the name is wrong)": "ghcr.io refused to hand out ghcr.io/a/b:1 (it needs credentials, or the name is wrong).",
		"bad::ref is not a valid image reference":                                                "bad::ref is not a valid image reference.",
		"registry.lab:5000 refused":                                                              "registry.lab:5000 refused.",
		"":                                                                                       "",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
