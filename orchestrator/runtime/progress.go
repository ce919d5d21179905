package runtime

// pullProgress turns the engine's per-layer pull messages into one overall
// percentage. Each layer counts by its size, half for downloading and half
// for extracting (both take real time on big CUDA images). Layers whose size
// is not known yet are assumed to be of average size, so the bar does not
// jump back when they start downloading; the result never goes down anyway.
type pullProgress struct {
	layers map[string]*layerProgress
	last   int
}

type layerProgress struct {
	total, downloaded, extracted int64
	done                         bool
}

// pullMessage is one line of the engine's JSON message stream.
type pullMessage struct {
	Status         string `json:"status"`
	ID             string `json:"id"`
	ProgressDetail struct {
		Current int64 `json:"current"`
		Total   int64 `json:"total"`
	} `json:"progressDetail"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

func (m pullMessage) err() string {
	if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
		return m.ErrorDetail.Message
	}
	return m.Error
}

func newPullProgress() *pullProgress {
	return &pullProgress{layers: map[string]*layerProgress{}}
}

// update applies one message and returns the overall percentage (0–99; 100
// is only reported once the pull has finished).
func (p *pullProgress) update(m pullMessage) int {
	l := p.layer(m)
	if l != nil {
		switch m.Status {
		case "Downloading":
			l.total = max(l.total, m.ProgressDetail.Total)
			l.downloaded = m.ProgressDetail.Current
		case "Verifying Checksum", "Download complete":
			l.downloaded = l.total
		case "Extracting":
			l.total = max(l.total, m.ProgressDetail.Total)
			l.downloaded = l.total
			l.extracted = m.ProgressDetail.Current
		case "Pull complete", "Already exists":
			l.downloaded, l.extracted, l.done = l.total, l.total, true
		}
	}
	if pct := p.percent(); pct > p.last {
		p.last = pct
	}
	return p.last
}

// layer returns the layer a message is about, nil for image-level messages
// ("Pulling from ...", "Digest: ...", "Status: ...").
func (p *pullProgress) layer(m pullMessage) *layerProgress {
	switch m.Status {
	case "Pulling fs layer", "Waiting", "Downloading", "Verifying Checksum",
		"Download complete", "Extracting", "Pull complete", "Already exists":
	default:
		return nil
	}
	if m.ID == "" {
		return nil
	}
	l := p.layers[m.ID]
	if l == nil {
		l = &layerProgress{}
		p.layers[m.ID] = l
	}
	return l
}

func (p *pullProgress) percent() int {
	var num, den int64
	known, unknown := 0, 0
	for _, l := range p.layers {
		switch {
		case l.total > 0:
			known++
			num += l.downloaded + l.extracted
			den += 2 * l.total
		case !l.done:
			unknown++
		}
	}
	if den == 0 {
		return 0
	}
	if unknown > 0 {
		den += int64(unknown) * den / int64(known)
	}
	pct := int(num * 100 / den)
	return min(max(pct, 0), 99)
}

// bytes sums what has been downloaded of the layers of known size, and
// their total size.
func (p *pullProgress) bytes() (done, total int64) {
	for _, l := range p.layers {
		done += l.downloaded
		total += l.total
	}
	return done, total
}
