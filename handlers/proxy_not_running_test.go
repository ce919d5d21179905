package handlers

import (
	"context"
	"strings"
	"testing"

	"workbench/models"
	"workbench/templates/i18n"
)

// The notebook tab says in one sentence why the workbench is not running,
// from the reason recorded by whoever stopped it, its state (preempted,
// queued) and, in the queue, its place.
func TestWhyNotRunning(t *testing.T) {
	en := context.Background()
	for _, tc := range []struct {
		state, reason string
		autoResume    bool
		position      int
		want          string
	}{
		{models.StateStopped, "", false, 0, "It was stopped by you (from the portal or the API)."},
		{models.StateStopped, "stopped after 1h0m0s without activity (idle timeout)", false, 0, "It was stopped after 1h0m0s without activity (idle timeout)."},
		{models.StateStopped, "stopped by an administrator (root)", false, 0, "It was stopped by an administrator (root)."},
		{models.StateStopped, "stopped: monthly budget of 100.00 USD reached (your files are kept)", false, 0, "It was stopped: monthly budget of 100.00 USD reached (your files are kept)."},
		{models.StateStopped, "the container exited (code 137)", false, 0, "It was stopped: the container exited (code 137)."},
		// An operator's docker stop or kill: not the owner's code.
		{models.StateStopped, "stopped outside the portal (by the server's operator or the engine)", false, 0,
			"It was stopped outside the portal (by the server's operator or the engine)."},
		// A reason with a colon of its own: a clause after the page's.
		{models.StateStopped, "copied with the data of another install (serve --new-identity): start it again here if it should run on this one", false, 0,
			"It was stopped: copied with the data of another install (serve --new-identity) — start it again here if it should run on this one."},
		{models.StateStopped, "stopped: quota exceeded: the monthly budget is used up (your files are kept)", false, 0,
			"It was stopped: quota exceeded — the monthly budget is used up (your files are kept)."},
		{models.StateFailed, "Jupyter exited while starting (exit code 1)", false, 0, "It failed: Jupyter exited while starting (exit code 1)."},
		// The reason's own colon after the page's: a dash, one sentence.
		{models.StateFailed, "could not start the container: no such device", false, 0, "It failed: could not start the container — no such device."},
		{models.StateStopping, "", false, 0, "It is stopping."},
		{models.StatePulling, "", false, 0, "It is starting (pulling). This page reloads by itself until JupyterLab answers."},
		{models.StatePreempted, "preempted: a higher-priority launch needed its GPUs (its home is kept; start it again when you like)", false, 0,
			"It was preempted: a higher-priority launch needed its GPUs. Start it again when you like."},
		{models.StatePreempted, "preempted: a higher-priority launch needed its GPUs (its home is kept; it resumes when GPUs free up)", true, 0,
			"It was preempted: a higher-priority launch needed its GPUs. It goes back in the queue by itself and resumes when GPUs free up; you can also start it now."},
		{models.StateQueued, "", false, 3,
			"It is waiting in the queue for free GPUs (position 3). It starts by itself when its turn comes; the workbench page shows the queue. This page reloads by itself."},
		{models.StateQueued, "waiting for free GPUs", false, 0,
			"It is waiting in the queue for free GPUs. It starts by itself when its turn comes; the workbench page shows the queue. This page reloads by itself."},
		{models.StateQueued, "preempted; waiting to resume", true, 2,
			"It was preempted by a higher-priority launch and waits in the queue to resume (position 2). It starts by itself when GPUs free up; the workbench page shows the queue. This page reloads by itself."},
	} {
		got := whyNotRunning(en, &models.Workbench{State: tc.state, Reason: tc.reason, AutoResume: tc.autoResume, QueuePosition: tc.position})
		if got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.state, tc.reason, got, tc.want)
		}
		if strings.Contains(got, "stopped by you") && tc.state != models.StateStopped {
			t.Errorf("%s: says the owner stopped it: %q", tc.state, got)
		}
	}
	// What the launch it yielded to asked for, from what the stop kept
	// (Workbench.PreemptedFor), never read back out of the reason: a
	// reason that merely reads like a preemption's is not taken apart.
	const needed = "priority interactive, 2 × H100 80GB HBM3 needed, 1 free"
	for _, tc := range []struct {
		reason, preemptedFor string
		autoResume           bool
		want                 string
	}{
		{"preempted: a higher-priority launch needed its GPUs (" + needed + "; its home is kept; start it again when you like)", needed, false,
			"It was preempted: a higher-priority launch needed its GPUs (" + needed + "). Start it again when you like."},
		{"preempted: a higher-priority launch needed its GPUs (" + needed + "; its home is kept; it resumes when GPUs free up)", needed, true,
			"It was preempted: a higher-priority launch needed its GPUs (" + needed + "). It goes back in the queue by itself and resumes when GPUs free up; you can also start it now."},
		// Kept, whatever the reason says (the reason is words for people).
		{"", needed, false, "It was preempted: a higher-priority launch needed its GPUs (" + needed + "). Start it again when you like."},
		// Looks like the pattern, but nothing was kept: nothing is read
		// out of it.
		{"preempted: a higher-priority launch needed its GPUs (priority batch, 8 × A100 needed, 0 free; its home is kept; start it again when you like)", "", false,
			"It was preempted: a higher-priority launch needed its GPUs. Start it again when you like."},
		{"preempted: a higher-priority launch needed its GPUs (its home is kept; start it again when you like); its home is kept; start it again when you like)", "", true,
			"It was preempted: a higher-priority launch needed its GPUs. It goes back in the queue by itself and resumes when GPUs free up; you can also start it now."},
		// The reason's look-alike disagrees with what was kept: the kept.
		{"preempted: a higher-priority launch needed its GPUs (priority batch, 8 × A100 needed, 0 free; its home is kept; start it again when you like)", needed, false,
			"It was preempted: a higher-priority launch needed its GPUs (" + needed + "). Start it again when you like."},
	} {
		wb := models.Workbench{State: models.StatePreempted, Reason: tc.reason, PreemptedFor: tc.preemptedFor, AutoResume: tc.autoResume}
		if got := whyNotRunning(en, &wb); got != tc.want {
			t.Errorf("preempted %q (kept %q): got %q, want %q", tc.reason, tc.preemptedFor, got, tc.want)
		}
	}
	// Queued again by auto-resume: what it yielded to, kept by the requeue.
	for _, tc := range []struct {
		position int
		want     string
	}{
		{2, "It was preempted: a higher-priority launch needed its GPUs (" + needed + "). It waits in the queue to resume (position 2) and starts by itself when GPUs free up; the workbench page shows the queue. This page reloads by itself."},
		{0, "It was preempted: a higher-priority launch needed its GPUs (" + needed + "). It waits in the queue to resume and starts by itself when GPUs free up; the workbench page shows the queue. This page reloads by itself."},
	} {
		wb := models.Workbench{State: models.StateQueued, Reason: "preempted; waiting to resume", PreemptedFor: needed, AutoResume: true, QueuePosition: tc.position}
		if got := whyNotRunning(en, &wb); got != tc.want {
			t.Errorf("queued to resume at %d: got %q, want %q", tc.position, got, tc.want)
		}
	}
	// A stopped workbench's reason is never read as a preemption's.
	if got := whyNotRunning(en, &models.Workbench{State: models.StateStopped, PreemptedFor: needed,
		Reason: "stopped by an administrator (root)"}); got != "It was stopped by an administrator (root)." {
		t.Errorf("stopped after an old preemption: %q", got)
	}

	// Every state a person can start from offers Start on this page; a
	// queued or launching one reloads instead.
	for _, tc := range []struct {
		state    string
		canStart bool
		reloads  bool
	}{
		{models.StateStopped, true, false},
		{models.StateFailed, true, false},
		{models.StatePreempted, true, false},
		{models.StateQueued, false, true},
		{models.StateStarting, false, true},
		{models.StateStopping, false, true},
	} {
		v := notRunningView(en, &models.Workbench{State: tc.state})
		if v.CanStart != tc.canStart || (v.ReloadSeconds > 0) != tc.reloads {
			t.Errorf("%s: Start %v, reloads every %d s; want Start %v, reloads %v", tc.state, v.CanStart, v.ReloadSeconds, tc.canStart, tc.reloads)
		}
	}

	// In Chinese the sentence is Chinese; names and figures stay.
	zh := i18n.WithLocale(en, i18n.Chinese)
	for _, wb := range []models.Workbench{
		{State: models.StatePreempted},
		{State: models.StateQueued, QueuePosition: 4},
		{State: models.StateStopped, Reason: "stopped by an administrator (root)"},
		{State: models.StateStopped, Reason: "the container exited (code 137)"},
		{State: models.StateStopped, Reason: "stopped outside the portal (by the server's operator or the engine)"},
		{State: models.StateStopped},
	} {
		got := whyNotRunning(zh, &wb)
		if got == whyNotRunning(en, &wb) || strings.Contains(got, "It ") || strings.Contains(got, "stopped") {
			t.Errorf("zh-CN %s %q: not translated: %q", wb.State, wb.Reason, got)
		}
		if wb.QueuePosition == 4 && !strings.Contains(got, "4") {
			t.Errorf("zh-CN queued: no position: %q", got)
		}
		if wb.Reason == "stopped by an administrator (root)" && !strings.Contains(got, "root") {
			t.Errorf("zh-CN admin stop: no name: %q", got)
		}
	}
	// What the launch it yielded to asked for, in Chinese; figures and the
	// class's name (what the API takes) kept.
	taken := models.Workbench{State: models.StatePreempted, Reason: "preempted: a higher-priority launch needed its GPUs (" + needed + "; its home is kept; start it again when you like)",
		PreemptedFor: needed}
	if got, want := whyNotRunning(zh, &taken), "已被抢占：一个优先级更高的启动请求需要它的 GPU（优先级 interactive，需要 2 × H100 80GB HBM3，空闲 1 个）。你可以随时重新启动它。"; got != want {
		t.Errorf("zh-CN preempted with what the launch asked: %q, want %q", got, want)
	}
	resuming := models.Workbench{State: models.StateQueued, Reason: "preempted; waiting to resume", PreemptedFor: needed, AutoResume: true, QueuePosition: 3}
	if got, want := whyNotRunning(zh, &resuming), "已被抢占：一个优先级更高的启动请求需要它的 GPU（优先级 interactive，需要 2 × H100 80GB HBM3，空闲 1 个）。它正在队列中等待恢复（第 3 位），GPU 空闲时会自动启动；工作台页面会显示排队情况。本页会自动刷新。"; got != want {
		t.Errorf("zh-CN queued to resume with what the launch asked: %q, want %q", got, want)
	}
	// The idle time inside the reason is Chinese too, as on the workbench
	// page (it read "它在 1 min 无活动后被停止").
	idle := models.Workbench{State: models.StateStopped, Reason: "stopped after 1 h 5 min without activity (idle timeout)"}
	if got := whyNotRunning(zh, &idle); !strings.Contains(got, "1 小时 5 分钟") || strings.Contains(got, "min") {
		t.Errorf("zh-CN idle stop: %q, want the duration in Chinese", got)
	}
}
