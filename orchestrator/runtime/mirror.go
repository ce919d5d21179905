package runtime

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/distribution/reference"
)

// Mirrors maps a registry host as written in image references ("docker.io",
// "nvcr.io", "quay.io", "registry.local:5000") to the mirror every pull
// from it goes to instead ("registry.example.cn", or a host with a path
// prefix such as "harbor.lab/dockerhub"). The catalog and every page keep
// the original reference; only the engine's pull sees the mirror.
type Mirrors map[string]string

// ParseMirrors reads the admin's setting: one "registry = mirror" per line
// (or "registry mirror"), blank lines and # comments ignored. Both sides
// are host[:port], the mirror may add a /path prefix; no scheme.
func ParseMirrors(text string) (Mirrors, error) {
	out := Mirrors{}
	for i, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		from, to, ok := strings.Cut(line, "=")
		if !ok {
			f := strings.Fields(line)
			if len(f) != 2 {
				return nil, fmt.Errorf("line %d: want \"registry = mirror\", e.g. \"docker.io = registry.example.cn\"", i+1)
			}
			from, to = f[0], f[1]
		}
		from, to = strings.ToLower(strings.TrimSpace(from)), strings.TrimSuffix(strings.TrimSpace(to), "/")
		if from == "index.docker.io" || from == "registry-1.docker.io" {
			from = "docker.io"
		}
		if err := checkRegistryHost(from, false); err != nil {
			return nil, fmt.Errorf("line %d: registry %q %w", i+1, from, err)
		}
		if err := checkRegistryHost(to, true); err != nil {
			return nil, fmt.Errorf("line %d: mirror %q %w", i+1, to, err)
		}
		if _, dup := out[from]; dup {
			return nil, fmt.Errorf("line %d: %s has two mirrors", i+1, from)
		}
		out[from] = to
	}
	return out, nil
}

// checkRegistryHost accepts host[:port], and with path a /repo/prefix.
func checkRegistryHost(s string, path bool) error {
	if s == "" {
		return fmt.Errorf("is empty")
	}
	if strings.Contains(s, "://") {
		return fmt.Errorf("must be a host name without http:// or https://")
	}
	host, prefix, hasPrefix := strings.Cut(s, "/")
	if hasPrefix && !path {
		return fmt.Errorf("must be a registry host such as docker.io, nvcr.io or registry.local:5000 (no path)")
	}
	// A reference with this host must parse as one: the host part is the
	// domain the reference grammar accepts, the prefix a path of it.
	probe := host + "/probe/x"
	if hasPrefix {
		probe = host + "/" + prefix + "/x"
	}
	named, err := reference.ParseNamed(probe)
	if err != nil || reference.Domain(named) != host || (!strings.ContainsAny(host, ".:") && host != "localhost") {
		if lower := strings.ToLower(prefix); hasPrefix && lower != prefix && checkRegistryHost(host+"/"+lower, path) == nil {
			// Repository paths are lowercase: say so rather than that
			// harbor.lab.cn/DockerHub is no registry host.
			return fmt.Errorf("must have a lowercase path (%s)", host+"/"+lower)
		}
		return fmt.Errorf("must be a registry host such as docker.io, nvcr.io or registry.local:5000")
	}
	return nil
}

// Rewrite gives the reference to pull ref from: the same repository, tag
// and digest at the mirror of its registry. A reference without a host is
// Docker Hub's (docker.io/library/ for one without a slash). ok is false
// when no mirror applies (then pull is ref itself, normalised).
func (m Mirrors) Rewrite(ref string) (pull string, ok bool, err error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", false, err
	}
	named = reference.TagNameOnly(named) // the engine would pull every tag
	mirror, found := m[reference.Domain(named)]
	if !found {
		return named.String(), false, nil
	}
	s := mirror + "/" + reference.Path(named)
	if t, isTagged := named.(reference.Tagged); isTagged {
		s += ":" + t.Tag()
	}
	if d, isDigested := named.(reference.Digested); isDigested {
		s += "@" + d.Digest().String()
	}
	if _, err := reference.ParseNamed(s); err != nil {
		return "", false, fmt.Errorf("mirror reference %q: %w", s, err)
	}
	return s, true, nil
}

// String writes the setting back in ParseMirrors' form, sorted.
func (m Mirrors) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, m[k])
	}
	return b.String()
}

// SetMirrorSource tells the engine where to read the registry mirrors from
// at each pull (the admin's setting in the database), so that a change
// applies to the next pull without a restart.
func (d *Docker) SetMirrorSource(src func(context.Context) (Mirrors, error)) {
	d.mirrorsMu.Lock()
	defer d.mirrorsMu.Unlock()
	d.mirrors = src
}

func (d *Docker) currentMirrors(ctx context.Context) (Mirrors, error) {
	d.mirrorsMu.Lock()
	src := d.mirrors
	d.mirrorsMu.Unlock()
	if src == nil {
		return nil, nil
	}
	return src(ctx)
}
