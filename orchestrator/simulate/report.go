package simulate

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Percentile is the nearest-rank p-th percentile (0 for none).
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func mins(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return fmt.Sprintf("%.0fm", d.Minutes())
}

// WriteTable prints the policy table and the cost per user.
func WriteTable(w io.Writer, results []*Result) error {
	if len(results) == 0 {
		return nil
	}
	c := results[0].Config
	fmt.Fprintf(w, "%d × %s, %d jobs, window %s; sharing: %s × %s; grace %s; rate %s per GPU-hour\n\n",
		c.GPUs, c.Model, results[0].Jobs, results[0].Window, count(c.SharedGPUs, "GPU", "GPUs"), count(c.SlicesPerGPU, "slice", "slices"), c.Grace, Money(c.RatePerGPUHour))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\tutil\tserved\trejected\tpreempted\tlost GPU-h"
	for _, cl := range ClassNames {
		head += "\t" + cl + " wait p50/p95"
	}
	fmt.Fprintln(tw, head+"\t")
	for _, r := range results {
		line := fmt.Sprintf("%s\t%.1f%%\t%.1f%%\t%d\t%d\t%.1f", r.Policy, 100*r.Utilisation(),
			100*r.ServedGPUHours/r.AvailableGPUHours, r.Rejected, r.Preempted, r.LostGPUHours)
		for _, cl := range ClassNames {
			line += fmt.Sprintf("\t%s / %s", mins(Percentile(r.Waits[cl], 50)), mins(Percentile(r.Waits[cl], 95)))
		}
		fmt.Fprintln(tw, line+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nutil: GPU-hours held ÷ available; served: GPU-hours asked for (a 0.25 request counts a quarter) ÷ available.")
	fmt.Fprintln(w, "\ncost per user:")
	var users []string
	for u := range results[0].CostMicro {
		users = append(users, u)
	}
	sort.Strings(users)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head = "user"
	for _, r := range results {
		head += "\t" + string(r.Policy)
	}
	fmt.Fprintln(tw, head+"\t")
	for _, u := range users {
		line := u
		for _, r := range results {
			line += "\t" + Money(r.CostMicro[u])
		}
		fmt.Fprintln(tw, line+"\t")
	}
	return tw.Flush()
}

// Money prints micro-units with two decimals (truncated).
func Money(micro int64) string {
	sign := ""
	if micro < 0 {
		sign, micro = "-", -micro
	}
	return fmt.Sprintf("%s%d.%02d", sign, micro/1_000_000, micro%1_000_000/10_000)
}

// WriteSVG draws, per policy, a bar of utilisation and one of served demand
// (percent of available GPU-hours), with the rejected and preempted counts
// under each group. Hand-written SVG: no scripts, no external references.
func WriteSVG(w io.Writer, results []*Result) error {
	const (
		width, height = 720, 360
		left, top     = 60, 40
		plotH         = 220
	)
	groupW := (width - left - 20) / max(len(results), 1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<title>Policy comparison</title><rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">GPU utilisation by policy (%% of available GPU-hours)</text>`+"\n", left)
	for pct := 0; pct <= 100; pct += 25 {
		y := top + plotH - plotH*pct/100
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/><text x="%d" y="%d" text-anchor="end">%d%%</text>`+"\n",
			left, y, width-20, y, left-6, y+4, pct)
	}
	bar := func(x int, v float64, color, label string) {
		h := int(float64(plotH) * min(max(v, 0), 1))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %.1f%%</title></rect>`+"\n",
			x, top+plotH-h, groupW/3, h, color, html.EscapeString(label), 100*v)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%.0f%%</text>`+"\n", x+groupW/6, top+plotH-h-4, 100*v)
	}
	for i, r := range results {
		x := left + i*groupW + groupW/6
		bar(x, r.Utilisation(), "#3b6ea5", "held")
		bar(x+groupW/3, r.ServedGPUHours/r.AvailableGPUHours, "#8fb96b", "served")
		cx := left + i*groupW + groupW/2
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", cx, top+plotH+18, html.EscapeString(string(r.Policy)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">%d rejected, %d preempted</text>`+"\n",
			cx, top+plotH+34, r.Rejected, r.Preempted)
	}
	ly := height - 30
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="#3b6ea5"/><text x="%d" y="%d">GPU-hours held</text>`+"\n", left, ly, left+18, ly+10)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="#8fb96b"/><text x="%d" y="%d">GPU-hours asked for and served</text>`+"\n", left+150, ly, left+168, ly+10)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// count words n things: "1 slice", "4 slices".
func count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
