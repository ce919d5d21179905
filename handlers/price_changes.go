package handlers

import (
	"time"

	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models/pricing"
	"workbench/templates"
)

// priceChangesAhead words the rates an admin scheduled for later, for the
// pages where members choose what to run (the launch form, the GPU pool):
// a run that lasts past the change is billed at the new rate from then, so
// they hear of it before it bills them, not only on /admin/prices. Nil on
// error: the notice is a courtesy, and the pages work without it.
func (h *Handler) priceChangesAhead(c *gin.Context) []string {
	return h.priceChangesAheadAt(c, h.wbs.Now())
}

// priceChangesAheadAt is priceChangesAhead at now. A reader who left
// before the prices were read is no warning (make bench-load counted one
// when its clients hung up).
func (h *Handler) priceChangesAheadAt(c *gin.Context, now time.Time) []string {
	ctx := c.Request.Context()
	changes, err := h.store.PriceChangesAhead(ctx, now)
	if err != nil {
		if !proxy.ClientGone(c.Request, err) {
			h.log.Warn("price changes ahead", "err", err)
		}
		return nil
	}
	out := make([]string, 0, len(changes))
	for _, ch := range changes {
		// In the reader's language and zone, as the calculator words the
		// change it prices ("2026-12-15 00:00 UTC" stood in a Chinese page).
		when := templates.WhenIn(ctx, &ch.From)
		if ch.From.Second() != 0 || ch.From.Nanosecond() != 0 {
			// "from 02:13" for a change at 02:13:32: someone stopping at
			// 02:13:10 read that the new rate applied already.
			when = templates.WhenToTheSecond(ctx, ch.From)
		}
		if ch.Tier != "" { // the only tier is preemptible (AddPriceTier)
			if ch.HasNow {
				out = append(out, trc(c, "Preemptible runs: %d%% off the GPU rates from %s (now %d%% off)", ch.NextMicros, when, ch.NowMicros))
			} else {
				out = append(out, trc(c, "Preemptible runs: %d%% off the GPU rates from %s", ch.NextMicros, when))
			}
			continue
		}
		what, _, _ := calcResourceLabel(ctx, pricing.ResourceCost{Resource: ch.Resource})
		if ch.GPUModel != "" {
			what += " " + ch.GPUModel
		}
		rate := func(micros int64) string {
			return templates.MoneyRate(ctx, micros, h.cfg.Currency) + " / " + trcMsg(c, resourceUnit(ch.Resource))
		}
		if ch.HasNow {
			out = append(out, trc(c, "%s: %s from %s (now %s)", what, rate(ch.NextMicros), when, rate(ch.NowMicros)))
		} else {
			out = append(out, trc(c, "%s: %s from %s", what, rate(ch.NextMicros), when))
		}
	}
	return out
}
