package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"workbench/orchestrator/runtime"
)

// installsMade maps each install id a test portal made to the test that
// made it, so that engine objects left after every test's cleanup can be
// traced to their test (reportLeaks).
var installsMade sync.Map // install id → test name

// noteInstall records that test made a portal with install id.
func noteInstall(id, test string) { installsMade.LoadOrStore(id, test) }

// reportLeaks lists, after all tests, the containers, volumes and networks
// still labelled with an install a test made: each test removes its own
// at its end, so one found here was made after that (work that outlived
// its portal). It names the test, removes them (a leaked network holds one
// of the engine's address pools for good) and returns how many it found.
func reportLeaks(w io.Writer, installs *sync.Map) int {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return 0
	}
	defer cli.Close()
	ctx := context.Background()
	if _, err := cli.Ping(ctx); err != nil {
		return 0
	}
	var lines []string
	installs.Range(func(k, v any) bool {
		id, test := k.(string), v.(string)
		f := filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+id))
		var left []string
		cs, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		for _, c := range cs {
			left = append(left, "container "+c.Names[0])
		}
		vs, _ := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
		for _, v := range vs.Volumes {
			left = append(left, "volume "+v.Name)
		}
		ns, _ := cli.NetworkList(ctx, network.ListOptions{Filters: f})
		for _, n := range ns {
			left = append(left, "network "+n.Name+" (made "+n.Created.UTC().Format("15:04:05")+")")
		}
		if len(left) > 0 {
			lines = append(lines, fmt.Sprintf("%s (install %s) left %v", test, id, left))
			removeInstallObjects(cli, id)
		}
		return true
	})
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, "web tests: engine objects outlived their test:", l)
	}
	return len(lines)
}

// recordLeaks runs reportLeaks and, when it finds any, writes its lines to
// artifacts/engine-leaks.txt too (WORKBENCH_ARTIFACTS moves it): go test
// shows a passing package's output to nobody.
func recordLeaks() {
	var buf bytes.Buffer
	if reportLeaks(&buf, &installsMade) == 0 {
		return
	}
	os.Stderr.Write(buf.Bytes())
	dir := os.Getenv("WORKBENCH_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "artifacts") // the tests run in web/
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "engine-leaks.txt"), buf.Bytes(), 0o644)
	}
}

// The leak report names the test whose install an object carries, and
// removes the object.
func TestLeakReportNamesTheTest(t *testing.T) {
	cli := dockerClient(t)
	id := "leaktest" + strings.ToLower(t.Name()[len(t.Name())-4:]) + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	var installs sync.Map // not installsMade: the package's own report must still see the others
	installs.Store(id, "TestSomethingThatLeaks")
	ctx := context.Background()
	name := "wb-net-" + id
	if _, err := cli.NetworkCreate(ctx, name, network.CreateOptions{Labels: map[string]string{runtime.LabelInstall: id}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.NetworkRemove(ctx, name) })
	var buf bytes.Buffer
	if n := reportLeaks(&buf, &installs); n != 1 || !strings.Contains(buf.String(), "TestSomethingThatLeaks (install "+id+") left [network "+name) {
		t.Fatalf("report (%d): %s", n, buf.String())
	}
	if _, err := cli.NetworkInspect(ctx, name, network.InspectOptions{}); err == nil {
		t.Fatal("the leaked network is still there after the report")
	}
}
