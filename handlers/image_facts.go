package handlers

import (
	"regexp"
	"strings"

	"workbench/models"
	"workbench/templates"
)

// frameworks are the names an image's tags or reference are searched for,
// as they are shown.
var frameworks = []string{"PyTorch", "TensorFlow", "JAX", "Keras", "RAPIDS", "scikit-learn", "Hugging Face", "R"}

var (
	versionRe    = regexp.MustCompile(`^v?([0-9]+(?:\.[0-9]+)*)$`)
	refCUDARe    = regexp.MustCompile(`(?i)cuda-?([0-9]+(?:\.[0-9]+)*)`)
	refPythonRe  = regexp.MustCompile(`(?i)(?:python-?|py)([0-9]+(?:\.[0-9]+)*)`)
	tagWordSplit = regexp.MustCompile(`\s+`)
)

// imageFacts reads an image's structured facts from its catalog tags
// ("CUDA 12.4", "PyTorch 2.5", "Python 3.11") and, for what the tags do
// not say, from its reference's tag ("cuda12-python-3.11", "24.10-py3").
// The catalog has no separate fields for them: admins already write them
// as tags, so every existing entry shows its facts without being edited.
func imageFacts(img models.Image) templates.ImageFacts {
	var f templates.ImageFacts
	for _, tag := range img.TagList() {
		words := tagWordSplit.Split(strings.TrimSpace(tag), -1)
		name, version := words[0], ""
		if len(words) > 1 {
			if m := versionRe.FindStringSubmatch(words[len(words)-1]); m != nil {
				name, version = strings.Join(words[:len(words)-1], " "), m[1]
			} else {
				name = strings.Join(words, " ")
			}
		}
		switch {
		case strings.EqualFold(name, "CUDA"):
			if f.CUDA == "" {
				f.CUDA = orText(version, templates.CUDAUnversioned)
			}
		case strings.EqualFold(name, "Python"):
			if f.Python == "" {
				f.Python = orText(version, "3")
			}
		default:
			for _, fw := range frameworks {
				if strings.EqualFold(name, fw) && f.Framework == "" {
					f.Framework = strings.TrimSpace(fw + " " + version)
				}
			}
		}
	}
	ref := img.Image
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[i+1:]
	} else {
		ref = ""
	}
	if m := refCUDARe.FindStringSubmatch(ref); m != nil && (f.CUDA == "" || f.CUDA == templates.CUDAUnversioned) {
		f.CUDA = m[1]
	}
	if m := refPythonRe.FindStringSubmatch(ref); m != nil && f.Python == "" {
		f.Python = m[1]
	}
	return f
}

// withPresence adds to an image card's facts what the engine knows: on
// this server (with its size) or not; nothing when the engine did not
// answer.
func withPresence(f templates.ImageFacts, s templates.ImageStatus) templates.ImageFacts {
	switch s.Presence {
	case "present":
		yes := true
		f.Present, f.Size = &yes, s.Size
	case "absent":
		no := false
		f.Present = &no
	}
	return f
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
