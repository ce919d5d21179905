package handlers

import (
	"context"
	"net/url"
	"time"

	"workbench/models/pricing"
)

// useMeasured reports whether a TCO request asks for the measured power
// and utilisation ("use_measured": 1, on or true).
func useMeasured(v url.Values) bool {
	switch v.Get("use_measured") {
	case "1", "on", "true":
		return true
	}
	return false
}

// measuredTCO fits the last 30 days of per-minute telemetry of the GPUs of
// model: those whose NVML name contains it, else those of its family (a
// catalog name such as H100-80GB finds "NVIDIA H100 80GB HBM3").
func (h *Handler) measuredTCO(ctx context.Context, model string) (pricing.Measured, error) {
	to := time.Now().UTC()
	from := to.AddDate(0, 0, -pricing.MeasuredDays)
	st, err := h.store.MeasuredGPUStats(ctx, from, to, model)
	if err == nil && st.UtilRead == 0 && pricing.Family(model) != "" {
		st, err = h.store.MeasuredGPUStats(ctx, from, to, pricing.Family(model))
	}
	if err != nil {
		return pricing.Measured{}, err
	}
	return pricing.FitMeasured(pricing.MeasuredSums{Minutes: st.Minutes, SumU: st.SumU, SumP: st.SumP,
		SumUU: st.SumUU, SumUP: st.SumUP, UtilSum: st.UtilSum, UtilReads: st.UtilRead})
}

// useMeasured replaces def's guessed watts and utilisation with the
// measured ones for the request's GPU model; the request's own values of
// those fields give way (the point of the choice). It returns the values
// to parse and, when nothing usable was measured, the reason.
func (env *calcEnv) useMeasured(v url.Values, def *pricing.TCOInput) (url.Values, string) {
	model := v.Get("gpu_model")
	if model == "" {
		model = def.GPUModel
	}
	m, err := env.measure(model)
	if err != nil {
		return v, err.Error()
	}
	m.Apply(def)
	env.measuredNote, env.measured = m.Note(), &m
	out := url.Values{}
	for k, vs := range v {
		switch k {
		case "gpu_active_watts", "gpu_idle_watts", "utilization":
			continue
		}
		out[k] = vs
	}
	return out, ""
}
