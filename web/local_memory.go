package web

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// localMemoryBytes is this machine's memory from /proc/meminfo (0 where it
// cannot be read). The default flavors are sized by it when the engine
// does not answer at the first start: in the supported single-server
// install the portal runs on the engine's host (a container sees the
// host's MemTotal too), as the CPU count falls back to the portal's own.
func localMemoryBytes() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return memTotalBytes(bufio.NewScanner(f))
}

// memTotalBytes reads the "MemTotal: N kB" line of a meminfo listing.
func memTotalBytes(sc *bufio.Scanner) int64 {
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		return kb << 10
	}
	return 0
}
