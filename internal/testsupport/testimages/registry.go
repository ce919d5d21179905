package testimages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// Registry is a minimal read-only Docker registry (distribution v2 API)
// serving one image, so tests can exercise a real pull — progress
// included — on an engine with no registry access. It listens on
// 127.0.0.1, which engines treat as an insecure (plain HTTP) registry by
// default; the engine must run on this host.
type Registry struct {
	// Ref is the pullable reference, e.g. 127.0.0.1:41234/workbench-test/pullable:ab12cd.
	Ref string

	srv       *http.Server
	repo, tag string
	manifest  []byte
	mdigest   string
	blobs     map[string][]byte
	delay     atomic.Int64 // per-blob delay, to hold a pull in progress
	// held, while set, holds every blob GET until it is closed (Hold,
	// Release): a pull that stays in progress until the test says, where
	// a delay is a timer a busy machine can outrun.
	held atomic.Pointer[chan struct{}]
}

// PullableRepo is the repository Registry serves (and pulled images land in).
const PullableRepo = "workbench-test/pullable"

const manifestType = "application/vnd.docker.distribution.manifest.v2+json"

// ServeRandomImage builds a FROM scratch image holding size random bytes —
// so its layer exists nowhere in the engine and a pull really downloads and
// extracts it — exports it, deletes it from the engine and serves it. The
// pulled image lands in PullableRepo; remove Ref when done.
func ServeRandomImage(ctx context.Context, cli client.APIClient, size int) (*Registry, error) {
	id := randHex(6)
	src := "workbench-test/pullable-src:" + id
	payload := make([]byte, size)
	_, _ = rand.Read(payload)
	files := []contextFile{
		{name: "Dockerfile", mode: 0o644, data: []byte("FROM scratch\nCOPY payload /payload\n")},
		{name: "payload", mode: 0o644, data: payload},
	}
	if err := buildImage(ctx, cli, src, files); err != nil {
		return nil, err
	}
	saved, err := saveImage(ctx, cli, src)
	// Deleted whatever happened: the point is that the engine lacks it.
	_, rmErr := cli.ImageRemove(ctx, src, image.RemoveOptions{Force: true, PruneChildren: true})
	if err != nil {
		return nil, err
	}
	if rmErr != nil {
		return nil, fmt.Errorf("remove source image %s: %w", src, rmErr)
	}

	r := &Registry{repo: PullableRepo, tag: id, blobs: map[string][]byte{}}
	if err := r.load(saved); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.Ref = ln.Addr().String() + "/" + r.repo + ":" + r.tag
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Hold makes blob downloads wait until Release: a pull started now stays
// in progress for as long as the test needs it to.
func (r *Registry) Hold() {
	ch := make(chan struct{})
	r.held.Store(&ch)
}

// Release lets held and later blob downloads go (Hold). Safe to call
// more than once.
func (r *Registry) Release() {
	if ch := r.held.Swap(nil); ch != nil {
		close(*ch)
	}
}

// SetDelay makes every blob download wait d first, so a test can watch a
// workbench sit in "pulling".
func (r *Registry) SetDelay(d time.Duration) { r.delay.Store(int64(d)) }

// Close stops serving.
func (r *Registry) Close() error { return r.srv.Close() }

// saveImage returns the files of `docker save ref`.
func saveImage(ctx context.Context, cli client.APIClient, ref string) (map[string][]byte, error) {
	rc, err := cli.ImageSave(ctx, []string{ref})
	if err != nil {
		return nil, fmt.Errorf("save %s: %w", ref, err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		} else if err != nil {
			return nil, fmt.Errorf("save %s: %w", ref, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if files[hdr.Name], err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
	}
}

// load turns a `docker save` archive (classic or OCI layout, both carry
// manifest.json) into a schema 2 manifest and gzipped layer blobs.
func (r *Registry) load(saved map[string][]byte) error {
	var m []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(saved["manifest.json"], &m); err != nil || len(m) != 1 {
		return fmt.Errorf("docker save: bad manifest.json (%v)", err)
	}
	config, ok := saved[m[0].Config]
	if !ok {
		return fmt.Errorf("docker save: config %s missing", m[0].Config)
	}
	type desc struct {
		MediaType string `json:"mediaType"`
		Size      int    `json:"size"`
		Digest    string `json:"digest"`
	}
	manifest := struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
		Config        desc   `json:"config"`
		Layers        []desc `json:"layers"`
	}{SchemaVersion: 2, MediaType: manifestType}
	manifest.Config = desc{"application/vnd.docker.container.image.v1+json", len(config), r.addBlob(config)}
	for _, name := range m[0].Layers {
		layer, ok := saved[name]
		if !ok {
			return fmt.Errorf("docker save: layer %s missing", name)
		}
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		_, _ = w.Write(layer)
		_ = w.Close()
		manifest.Layers = append(manifest.Layers, desc{"application/vnd.docker.image.rootfs.diff.tar.gzip", gz.Len(), r.addBlob(gz.Bytes())})
	}
	var err error
	r.manifest, err = json.Marshal(manifest)
	r.mdigest = digest(r.manifest)
	return err
}

func (r *Registry) addBlob(b []byte) string {
	d := digest(b)
	r.blobs[d] = b
	return d
}

// ServeHTTP implements the read side of the distribution API: /v2/,
// manifests by tag or digest, blobs by digest.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	if req.URL.Path == "/v2/" {
		w.WriteHeader(http.StatusOK)
		return
	}
	prefix := "/v2/" + r.repo + "/"
	rest, ok := strings.CutPrefix(req.URL.Path, prefix)
	if !ok || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		registryError(w, http.StatusNotFound, "NAME_UNKNOWN", "repository name not known to registry")
		return
	}
	switch {
	case strings.HasPrefix(rest, "manifests/"):
		ref := strings.TrimPrefix(rest, "manifests/")
		if ref != r.tag && ref != r.mdigest {
			registryError(w, http.StatusNotFound, "MANIFEST_UNKNOWN", "manifest unknown")
			return
		}
		w.Header().Set("Content-Type", manifestType)
		w.Header().Set("Docker-Content-Digest", r.mdigest)
		http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(r.manifest))
	case strings.HasPrefix(rest, "blobs/"):
		b, ok := r.blobs[strings.TrimPrefix(rest, "blobs/")]
		if !ok {
			registryError(w, http.StatusNotFound, "BLOB_UNKNOWN", "blob unknown to registry")
			return
		}
		if ch := r.held.Load(); ch != nil && req.Method == http.MethodGet {
			select {
			case <-*ch:
			case <-req.Context().Done():
				return
			}
		}
		if d := time.Duration(r.delay.Load()); d > 0 && req.Method == http.MethodGet {
			select {
			case <-time.After(d):
			case <-req.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Docker-Content-Digest", strings.TrimPrefix(rest, "blobs/"))
		http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(b))
	default:
		registryError(w, http.StatusNotFound, "UNSUPPORTED", "not implemented by the test registry")
	}
}

func registryError(w http.ResponseWriter, code int, errCode, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": errCode, "message": msg}}})
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ManifestDigest is the digest of the served manifest, for pulls by digest
// (Ref's repository + "@" + ManifestDigest()).
func (r *Registry) ManifestDigest() string { return r.mdigest }
