package web_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
)

// The end-to-end tests' expensive inputs — the portal binary the crash
// tests run, the fake Jupyter image, the real (debootstrap-built) Jupyter
// image and its SFTP variant — are fixtures: each is built at most once
// per test binary, and TestMain builds the ones the selected tests need
// before any test starts, so no test's clock or deadline covers a build
// (on a busy machine a build takes as long as it takes). A test asks for
// one with its getter (workbenchBinary, fakeJupyterImage, realJupyterImage,
// sftpJupyterImage); a failed build fails exactly the tests that need it,
// with the build's own error.
//
// Which tests need what is read from this package's source: TestMain
// parses the *_test.go files and follows calls between the package's
// functions from each selected Test/Benchmark to the getters (by name: an
// over-approximation that may build something a test turns out not to
// use, never one that misses). Where the source is not at hand (a test
// binary copied elsewhere) nothing is built up front and each getter
// builds on first use, still once and without a deadline.

type fixture struct {
	name   string
	getter string // the function tests call; how TestMain recognises a need
	deps   []*fixture
	build  func(ctx context.Context, cli client.APIClient) (string, error)
	// usable, when set, says whether this machine can build the fixture at
	// all; TestMain does not try one it cannot (the tests that need it
	// check the same thing and skip, or fail under CI, with the reason).
	usable func() error

	once sync.Once
	done atomic.Bool // the build has run (successfully or not)
	val  string
	err  error
	took time.Duration
}

var (
	fxBinary = &fixture{name: "the workbench binary (go build ./cmd/workbench)", getter: "workbenchBinary",
		build: func(ctx context.Context, _ client.APIClient) (string, error) { return buildWorkbenchBinary(ctx) }}
	fxFake = &fixture{name: "the fake Jupyter image", getter: "fakeJupyterImage",
		build: testimages.FakeJupyter}
	fxReal = &fixture{name: "the real Jupyter image (debootstrap; minutes the first time)", getter: "realJupyterImage",
		build: testimages.RealJupyter}
	fxSFTP = &fixture{name: "the real Jupyter image with sftp-server", getter: "sftpJupyterImage", deps: []*fixture{fxReal},
		usable: func() error { _, err := os.Stat(testimages.HostSFTPServer); return err },
		build: func(ctx context.Context, cli client.APIClient) (string, error) {
			base, err := fxReal.get(ctx)
			if err != nil {
				return "", err
			}
			return testimages.WithSFTPServer(ctx, cli, base)
		}}
	fixtures = []*fixture{fxBinary, fxFake, fxReal, fxSFTP}

	// fixtureEngine is the engine images are built in (nil: none reachable).
	fixtureEngine struct {
		once sync.Once
		cli  *client.Client
		err  error
	}
	// prebuilt is set once TestMain has built what it could foresee.
	prebuilt bool
)

func engineForFixtures() (*client.Client, error) {
	fixtureEngine.once.Do(func() {
		cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err = cli.Ping(ctx)
			cancel()
		}
		if err != nil {
			fixtureEngine.err = fmt.Errorf("no Docker engine: %w", err)
			return
		}
		fixtureEngine.cli = cli
	})
	return fixtureEngine.cli, fixtureEngine.err
}

// get builds the fixture once (deadline-free) and returns it.
func (f *fixture) get(ctx context.Context) (string, error) {
	f.once.Do(func() {
		start := time.Now()
		defer func() { f.took = time.Since(start); f.done.Store(true) }()
		var cli client.APIClient
		if f != fxBinary {
			c, err := engineForFixtures()
			if err != nil {
				f.err = err
				return
			}
			cli = c
		}
		f.val, f.err = f.build(context.WithoutCancel(ctx), cli)
	})
	return f.val, f.err
}

// need is what the getters share: the fixture, or the test fails with the
// build's error (the same error in every test that needs it).
func (f *fixture) need(tb testing.TB) string {
	tb.Helper()
	if prebuilt && !f.done.Load() {
		tb.Logf("%s was not foreseen by TestMain for %s; building it now (once, no deadline)", f.name, tb.Name())
	}
	v, err := f.get(context.Background())
	if err != nil {
		tb.Fatalf("test fixture %s could not be built: %v", f.name, err)
	}
	return v
}

// workbenchBinary is the portal binary (`workbench serve`) the crash and
// restore tests run as a real process.
func workbenchBinary(t testing.TB) string { t.Helper(); return fxBinary.need(t) }

// fakeJupyterImage is the fake Jupyter image's reference.
func fakeJupyterImage(t testing.TB) string { t.Helper(); return fxFake.need(t) }

// realJupyterImage is the real Jupyter Notebook image's reference.
func realJupyterImage(t testing.TB) string { t.Helper(); return fxReal.need(t) }

// sftpJupyterImage is the real Jupyter image plus the host's sftp-server.
func sftpJupyterImage(t testing.TB) string { t.Helper(); return fxSFTP.need(t) }

func TestMain(m *testing.M) {
	if spec := os.Getenv(loadClientEnv); spec != "" {
		os.Exit(runLoadClient(spec))
	}
	flag.Parse()
	prebuildFixtures()
	code := m.Run()
	recordLeaks()
	if fxBinary.val != "" {
		os.Remove(fxBinary.val)
	}
	if fixtureEngine.cli != nil {
		fixtureEngine.cli.Close()
	}
	os.Exit(code)
}

// prebuildFixtures builds what the selected tests need. Nothing under
// -short (those tests skip before asking), and no images without an engine
// (the tests skip, or fail under CI, in dockerClient).
func prebuildFixtures() {
	defer func() { prebuilt = true }()
	if testing.Short() {
		return
	}
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return // -list runs no test
	}
	needs, err := fixtureNeeds(".")
	if err != nil {
		fmt.Fprintf(os.Stderr, "web tests: cannot tell which fixtures the tests need (%v); each is built on first use\n", err)
		return
	}
	want := map[*fixture]bool{}
	var names []string
	for test, fs := range needs {
		if !selected(test) {
			continue
		}
		for _, f := range fs {
			want[f] = true
		}
		names = append(names, test)
	}
	if len(want) == 0 {
		return
	}
	if _, err := engineForFixtures(); err != nil {
		return // the tests that need the engine skip (or fail under CI) on their own
	}
	sort.Strings(names)
	for _, f := range fixtures {
		if !want[f] {
			continue
		}
		if f.usable != nil {
			if err := f.usable(); err != nil {
				if testing.Verbose() {
					fmt.Fprintf(os.Stderr, "web tests: not building %s on this machine: %v\n", f.name, err)
				}
				continue
			}
		}
		if _, err := f.get(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "web tests: building %s failed after %s; the tests that need it will fail:\n%v\n",
				f.name, f.took.Round(time.Millisecond), err)
		} else if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "web tests: %s ready in %s\n", f.name, f.took.Round(time.Millisecond))
		}
	}
}

// selected reports whether -test.run / -test.bench / -test.skip select the
// top-level test or benchmark name (their first, unbracketed element, as
// the testing package matches top-level names).
func selected(name string) bool {
	lookup := func(n string) string {
		if f := flag.Lookup(n); f != nil {
			return f.Value.String()
		}
		return ""
	}
	match := func(pat string) bool {
		re, err := regexp.Compile(firstElem(pat))
		return err != nil || re.MatchString(name) // a bad pattern: assume selected
	}
	if skip := lookup("test.skip"); skip != "" && !strings.Contains(skip, "/") && match(skip) {
		return false
	}
	if strings.HasPrefix(name, "Benchmark") {
		bench := lookup("test.bench")
		return bench != "" && match(bench)
	}
	run := lookup("test.run")
	return run == "" || match(run)
}

// fixtureNeeds maps each Test/Benchmark/Fuzz function of the package's
// test files in dir to the fixtures it reaches through calls between the
// package's functions.
func fixtureNeeds(dir string) (map[string][]*fixture, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no test sources in %s (%v)", dir, err)
	}
	fset := token.NewFileSet()
	refs := map[string]map[string]bool{} // function or method name → names it mentions
	var tops []string
	for _, path := range files {
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			set := refs[name]
			if set == nil {
				set = map[string]bool{}
				refs[name] = set
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.Ident:
					set[x.Name] = true
				case *ast.SelectorExpr:
					set[x.Sel.Name] = true
				}
				return true
			})
			if fd.Recv == nil && (strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Benchmark") || strings.HasPrefix(name, "Fuzz")) && name != "TestMain" {
				tops = append(tops, name)
			}
		}
	}
	byGetter := map[string]*fixture{}
	for _, f := range fixtures {
		byGetter[f.getter] = f
	}
	memo := map[string]map[*fixture]bool{}
	var reach func(name string, seen map[string]bool) map[*fixture]bool
	reach = func(name string, seen map[string]bool) map[*fixture]bool {
		if r, ok := memo[name]; ok {
			return r
		}
		out := map[*fixture]bool{}
		if f := byGetter[name]; f != nil {
			out[f] = true
			for _, d := range f.deps {
				out[d] = true
			}
			return out
		}
		if seen[name] {
			return out
		}
		seen[name] = true
		for callee := range refs[name] {
			if callee == name {
				continue
			}
			if _, known := refs[callee]; !known && byGetter[callee] == nil {
				continue
			}
			for f := range reach(callee, seen) {
				out[f] = true
			}
		}
		memo[name] = out
		return out
	}
	needs := map[string][]*fixture{}
	for _, top := range tops {
		for f := range reach(top, map[string]bool{}) {
			needs[top] = append(needs[top], f)
		}
	}
	return needs, nil
}

// buildWorkbenchBinary builds ./cmd/workbench outside the repository (the
// working tree is shared with other builds) in a per-process file, so
// concurrent `go test` runs never exec each other's half-written binary.
func buildWorkbenchBinary(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside the module")
	}
	dir := filepath.Join(os.TempDir(), "workbench-crashtest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	removeDeadBinaries(dir)
	bin := filepath.Join(dir, "workbench-"+strconv.Itoa(os.Getpid()))
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/workbench")
	build.Dir = filepath.Dir(gomod)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/workbench: %v\n%s", err, out)
	}
	return bin, nil
}

// removeDeadBinaries deletes binaries left by test processes that are gone
// (best effort), so repeated runs do not pile them up in the temp dir.
func removeDeadBinaries(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "workbench-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// TestMain's reading of the sources: a test reaches the fixtures its
// helpers ask for, through any depth of calls, and a test that needs none
// gets none (so `go test -run` of a quick test builds nothing).
func TestFixtureNeedsFollowCalls(t *testing.T) {
	needs, err := fixtureNeeds(".")
	if err != nil {
		t.Fatal(err)
	}
	has := func(test string) map[*fixture]bool {
		out := map[*fixture]bool{}
		for _, f := range needs[test] {
			out[f] = true
		}
		return out
	}
	for test, want := range map[string][]*fixture{
		"TestRealJupyterKernelThroughPortal":          {fxFake, fxReal},           // realJupyterPortal → enginePortal
		"TestPortalCrashAndRestart":                   {fxBinary, fxFake, fxReal}, // newPortalProc → workbenchBinary
		"TestSSHSFTPAndSCP":                           {fxFake, fxReal, fxSFTP},   // sftp builds on the real image
		"TestLaunchRefusals":                          {fxFake},
		"TestLoginRotatesSessionAndLogoutInvalidates": nil,
	} {
		got := has(test)
		if len(got) != len(want) {
			t.Errorf("%s needs %d fixtures, want %d", test, len(got), len(want))
		}
		for _, f := range want {
			if !got[f] {
				t.Errorf("%s does not need %s", test, f.name)
			}
		}
	}
}
