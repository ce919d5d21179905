// Package simulate replays a GPU demand trace against the production
// scheduler (orchestrator/scheduler) with a simulated clock, under the
// policies of issue 12 §5, and reports utilisation, waits, rejections,
// preemptions and cost. It re-implements no scheduling rule: every start,
// rejection (exclusive-reject) and preemption comes from scheduler.Decide.
package simulate

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Job is one demand of a trace.
type Job struct {
	ID      string
	Arrival time.Duration // offset from the start of the trace
	User    string
	// GPUs asked for: a whole number, or a fraction below 1 for light work
	// that can share a GPU (one shared slice under the sharing policy, a
	// whole GPU under the others).
	GPUs        float64
	Duration    time.Duration
	Priority    string // a class of Classes
	Preemptible bool
	// Checkpoint is how often the job saves its work (0: never); what ran
	// since the last checkpoint is lost when it is preempted.
	Checkpoint time.Duration
}

// Fractional reports whether the job needs only part of a GPU.
func (j Job) Fractional() bool { return j.GPUs < 1 }

// Classes are the priority classes a trace may name, with the ranks the
// portal seeds (docs/scheduling.md).
var Classes = map[string]int{"interactive": 100, "batch": 50, "preemptible": 10}

// ClassNames in rank order, for reports.
var ClassNames = []string{"interactive", "batch", "preemptible"}

// Trace is a demand trace.
type Trace []Job

// traceJSON is one job as JSON (and the CSV columns, in this order).
type traceJSON struct {
	ArrivalS    float64 `json:"arrival_s"`
	User        string  `json:"user"`
	GPUs        float64 `json:"gpus"`
	DurationS   float64 `json:"duration_s"`
	Priority    string  `json:"priority"`
	Preemptible bool    `json:"preemptible"`
	CheckpointS float64 `json:"checkpoint_s"`
}

var csvHeader = []string{"arrival_s", "user", "gpus", "duration_s", "priority", "preemptible", "checkpoint_s"}

// ParseTrace reads a trace: JSON (an array of objects with the fields of
// csvHeader) when the input starts with '[', else CSV with that header.
// An error names the line (or element) and the field.
func ParseTrace(r io.Reader) (Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return nil, errors.New("trace is empty")
	}
	if s[0] == '[' {
		return parseJSON([]byte(s))
	}
	return parseCSV(s)
}

func parseJSON(data []byte) (Trace, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var rows []traceJSON
	if err := dec.Decode(&rows); err != nil {
		return nil, fmt.Errorf("trace JSON: %w", err)
	}
	var tr Trace
	for i, r := range rows {
		j, err := r.job(i)
		if err != nil {
			return nil, fmt.Errorf("trace element %d: %w", i, err)
		}
		tr = append(tr, j)
	}
	return tr, check(tr)
}

func parseCSV(s string) (Trace, error) {
	cr := csv.NewReader(strings.NewReader(s))
	cr.FieldsPerRecord = len(csvHeader)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("trace CSV header: %w", err)
	}
	for i, h := range csvHeader {
		if strings.TrimSpace(head[i]) != h {
			return nil, fmt.Errorf("trace CSV header: column %d is %q, want %q (header: %s)", i+1, head[i], h, strings.Join(csvHeader, ","))
		}
	}
	var tr Trace
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("trace CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		var r traceJSON
		num := func(col int) (float64, error) {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[col]), 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %q is not a number", csvHeader[col], rec[col])
			}
			return v, nil
		}
		bad := func(err error) (Trace, error) { return nil, fmt.Errorf("trace CSV line %d: %w", line, err) }
		if r.ArrivalS, err = num(0); err != nil {
			return bad(err)
		}
		r.User = strings.TrimSpace(rec[1])
		if r.GPUs, err = num(2); err != nil {
			return bad(err)
		}
		if r.DurationS, err = num(3); err != nil {
			return bad(err)
		}
		r.Priority = strings.TrimSpace(rec[4])
		if r.Preemptible, err = strconv.ParseBool(strings.TrimSpace(rec[5])); err != nil {
			return bad(fmt.Errorf("preemptible: %q is not true or false", rec[5]))
		}
		if r.CheckpointS, err = num(6); err != nil {
			return bad(err)
		}
		j, err := r.job(len(tr))
		if err != nil {
			return bad(err)
		}
		tr = append(tr, j)
	}
	return tr, check(tr)
}

func (r traceJSON) job(i int) (Job, error) {
	secs := func(name string, v float64) (time.Duration, error) {
		if math.IsNaN(v) || v < 0 || v > 366*24*3600 {
			return 0, fmt.Errorf("%s: %v is not a number of seconds between 0 and a year", name, v)
		}
		return time.Duration(v * float64(time.Second)).Round(time.Second), nil
	}
	var j Job
	var err error
	j.ID = fmt.Sprintf("j%04d", i+1)
	if j.Arrival, err = secs("arrival_s", r.ArrivalS); err != nil {
		return j, err
	}
	if j.Duration, err = secs("duration_s", r.DurationS); err != nil {
		return j, err
	}
	if j.Duration < time.Second {
		return j, fmt.Errorf("duration_s: must be at least 1 second")
	}
	if j.Checkpoint, err = secs("checkpoint_s", r.CheckpointS); err != nil {
		return j, err
	}
	if r.User == "" {
		return j, errors.New("user: empty")
	}
	j.User = r.User
	switch {
	case math.IsNaN(r.GPUs) || r.GPUs <= 0:
		return j, fmt.Errorf("gpus: %v must be more than 0", r.GPUs)
	case r.GPUs > 1 && r.GPUs != math.Trunc(r.GPUs):
		return j, fmt.Errorf("gpus: %v: above 1 only whole GPUs (a fraction below 1 asks for a shared slice)", r.GPUs)
	case r.GPUs > 1024:
		return j, fmt.Errorf("gpus: %v is more than 1024", r.GPUs)
	}
	j.GPUs = r.GPUs
	if _, ok := Classes[r.Priority]; !ok {
		return j, fmt.Errorf("priority: %q is not one of %s", r.Priority, strings.Join(ClassNames, ", "))
	}
	j.Priority = r.Priority
	j.Preemptible = r.Preemptible
	return j, nil
}

func check(tr Trace) error {
	if len(tr) == 0 {
		return errors.New("trace has no jobs")
	}
	return nil
}

// WriteCSV writes a trace in the CSV format ParseTrace reads.
func WriteCSV(w io.Writer, tr Trace) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }
	for _, j := range tr {
		rec := []string{f(j.Arrival), j.User, strconv.FormatFloat(j.GPUs, 'f', -1, 64), f(j.Duration), j.Priority,
			strconv.FormatBool(j.Preemptible), f(j.Checkpoint)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
