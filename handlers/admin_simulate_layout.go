package handlers

import (
	"sort"
	"strconv"
	"strings"

	"workbench/orchestrator"
)

// serverLayout is how the server's GPUs of one model are laid out now, the
// default of a what-if simulation: the simulation described "3 GPUs × 4
// slices" and no MIG on a server with one GPU in MIG and one shared in 2.
type serverLayout struct {
	gpus   int
	shared int // GPUs shared in slices
	slices int // slices of a shared GPU (the most any has; 0: none shared)
	// mig is the MIG layout in the simulator's --mig form, indexes
	// counted among the model's GPUs ("7:1g.10gb+1g.10gb").
	mig []string
}

func layoutOf(gpus []orchestrator.PoolGPU, model string) serverLayout {
	var own []orchestrator.PoolGPU
	for _, g := range gpus {
		if g.Model == model {
			own = append(own, g)
		}
	}
	sort.Slice(own, func(i, j int) bool { return own[i].Index < own[j].Index })
	l := serverLayout{gpus: len(own)}
	for i, g := range own {
		switch {
		case g.MIGEnabled && len(g.MIG) > 0:
			profiles := make([]string, len(g.MIG))
			for k, mi := range g.MIG {
				profiles[k] = mi.Profile
			}
			l.mig = append(l.mig, strconv.Itoa(i)+":"+strings.Join(profiles, "+"))
		case g.SharedSlices > 0:
			l.shared++
			l.slices = max(l.slices, g.SharedSlices)
		}
	}
	return l
}
