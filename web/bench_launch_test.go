package web_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/web"
)

// Launch benchmarks (issue 3): time from "launch" to "Jupyter answers
// /api/status", through the portal versus a plain create+start of the same
// image with the same command on a bridge network. Each iteration removes
// its container (untimed), so every launch is a cold container start with
// a warm image. Both sides poll at the same interval, so polling adds the
// same quantisation to each.
const launchPoll = 20 * time.Millisecond

// launchImage is the catalog entry both sides start.
type launchImage struct {
	ref, startCmd, user, home string
}

func BenchmarkLaunchToReady(b *testing.B) {
	cli := dockerClient(b)
	ref := realJupyterImage(b)
	benchLaunch(b, cli, "real Jupyter", launchImage{ref: ref, startCmd: testimages.RealJupyterStartCommand,
		user: testimages.RealJupyterUser, home: testimages.RealJupyterHome})
}

func BenchmarkLaunchToReadyFake(b *testing.B) {
	cli := dockerClient(b)
	ref := fakeJupyterImage(b)
	benchLaunch(b, cli, "fake Jupyter", launchImage{ref: ref, startCmd: testimages.FakeJupyterStartCommand,
		user: "1000", home: testimages.FakeJupyterHome})
}

func benchLaunch(b *testing.B, cli *client.Client, what string, img launchImage) {
	// A short stop grace: stopping is cleanup here, not what is measured.
	bp, err := startBenchPortal(cli, func(c *web.Config) { c.Workbenches.StopGrace = 3 * time.Second })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(bp.close)
	if err := bp.addImage("bench", img.ref, img.startCmd, img.user, img.home); err != nil {
		b.Fatal(err)
	}
	token, err := bp.userToken("bench")
	if err != nil {
		b.Fatal(err)
	}
	// The plain side's network exists beforehand, as the portal's per-user
	// network does after its first launch.
	netName := "wb-bench-" + randHex(4)
	if _, err := cli.NetworkCreate(context.Background(), netName, network.CreateOptions{Driver: "bridge",
		Labels: map[string]string{testimages.TestLabel: "1"}}); err != nil {
		b.Fatalf("create network %s: %v", netName, err)
	}
	b.Cleanup(func() { _ = cli.NetworkRemove(context.Background(), netName) })

	dockerRun := func(int) (time.Duration, func(), error) { return dockerRunToReady(cli, img, netName) }
	portal := func(i int) (time.Duration, func(), error) {
		start := time.Now()
		id, err := bp.launch(token, fmt.Sprintf("bench-%d-%s", i, randHex(2)), "bench", "CPU small")
		if err != nil {
			return 0, func() {}, err
		}
		cleanup := func() {
			if err := bp.remove(token, id); err != nil {
				b.Errorf("remove workbench %s: %v", id, err)
			}
		}
		if err := bp.waitState(token, id, "running", 5*time.Minute, launchPoll); err != nil {
			return 0, cleanup, err
		}
		return time.Since(start), cleanup, nil
	}

	// Each iteration launches launchRounds times on each side, the two
	// sides alternating and the order swapped every round, so a machine
	// that gets busier or quieter during the run weighs on both alike (one
	// launch of each, one after the other, gave the portal 1.06× and 0.76×
	// of docker run on two days). At -benchtime 3s b.N is 1.
	const launchRounds = 3
	var d, p []time.Duration
	for i := range b.N {
		for r := range launchRounds {
			order := []string{"docker_run", "portal"}
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, side := range order {
				launch := dockerRun
				if side == "portal" {
					launch = portal
				}
				took, cleanup, err := launch(i*launchRounds + r)
				b.StopTimer()
				cleanup()
				if err != nil {
					b.Fatalf("%s launch %d: %v", side, r, err)
				}
				b.StartTimer()
				if side == "portal" {
					p = append(p, took)
				} else {
					d = append(d, took)
				}
			}
		}
	}
	b.StopTimer()
	md, mp := median(d), median(p)
	b.ReportMetric(ms(md), "docker-run-median-ms")
	b.ReportMetric(ms(mp), "portal-median-ms")
	b.ReportMetric(ms(slices.Max(p)), "portal-max-ms")
	fmt.Printf("SUMMARY launch-to-ready, %s (median of %d each, interleaved): docker_run %.0f ms (%.0f–%.0f), portal %.0f ms (%.0f–%.0f), overhead %+.0f ms (%+.1f%%)\n",
		what, len(p), ms(md), ms(slices.Min(d)), ms(slices.Max(d)), ms(mp), ms(slices.Min(p)), ms(slices.Max(p)),
		ms(mp-md), 100*(float64(mp)/float64(md)-1))
}

// dockerRunToReady is `docker run` through the SDK: create and start the
// image with the catalog's start command (expanded here, split on spaces
// as the templates are meant to be), then poll Jupyter's status API on the
// container's bridge address until it answers 200.
func dockerRunToReady(cli *client.Client, img launchImage, netName string) (time.Duration, func(), error) {
	ctx := context.Background()
	id, token := "bench"+randHex(6), randHex(24)
	base := "/wb/" + id + "/"
	argv := strings.Fields(strings.NewReplacer("{port}", "8888", "{base_url}", base, "{token}", token).Replace(img.startCmd))
	start := time.Now()
	created, err := cli.ContainerCreate(ctx,
		&container.Config{Image: img.ref, Cmd: argv, User: img.user, Env: []string{"HOME=" + img.home},
			Labels: map[string]string{testimages.TestLabel: "1"}},
		&container.HostConfig{},
		&network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{netName: {}}},
		nil, "wb-bench-run-"+id)
	if err != nil {
		return 0, func() {}, fmt.Errorf("create: %w", err)
	}
	cleanup := func() {
		_ = cli.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	}
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return 0, cleanup, fmt.Errorf("start: %w", err)
	}
	info, err := cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		return 0, cleanup, fmt.Errorf("inspect: %w", err)
	}
	ep := info.NetworkSettings.Networks[netName]
	if ep == nil || ep.IPAddress == "" {
		return 0, cleanup, fmt.Errorf("container has no address on %s", netName)
	}
	u := "http://" + ep.IPAddress + ":8888" + base + "api/status"
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	for n, deadline := 1, time.Now().Add(5*time.Minute); time.Now().Before(deadline); n++ {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Authorization", "token "+token)
		if res, err := hc.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return time.Since(start), cleanup, nil
			}
		}
		// Now and then, not every poll (that would slow the side being
		// timed): a Jupyter that died will never answer.
		if n%25 == 0 {
			if info, err := cli.ContainerInspect(ctx, created.ID); err == nil && !info.State.Running {
				return 0, cleanup, fmt.Errorf("Jupyter exited (code %d) before answering", info.State.ExitCode)
			}
		}
		time.Sleep(launchPoll)
	}
	return 0, cleanup, fmt.Errorf("Jupyter at %s did not answer within 5 min", u)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func randHex(n int) string {
	buf := make([]byte, n)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}
