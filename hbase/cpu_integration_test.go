//go:build integration

package hbase

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/cputime"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/state"
)

// procTicks returns utime+stime, in clock ticks (1/100 s), of the process whose pid deploy/up wrote to
// .infra/run/<name>.pid.
func procTicks(t *testing.T, name string) int {
	dir := os.Getenv("FRONTIER_TEST_DEPLOY_DIR")
	if dir == "" {
		dir = "../deploy"
	}
	pid, err := os.ReadFile(filepath.Join(dir, "..", ".infra", "run", name+".pid"))
	if err != nil {
		t.Skipf("no pid file of %s: %v", name, err)
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
	if err != nil {
		t.Skipf("%s: %v", name, err)
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 on
	u, _ := strconv.Atoi(f[11])                              // field 14, utime
	k, _ := strconv.Atoi(f[12])                              // field 15, stime
	return u + k
}

func jvmTicks(t *testing.T) (hb, th int) { return procTicks(t, "hbase"), procTicks(t, "thrift") }

func selfTicks() float64 {
	return float64(cputime.Process()) / 1e7
}

// TestIntegrationCPUPerOp measures the CPU time each store operation costs in the RegionServer JVM, the Thrift2
// gateway JVM and this client, from /proc: unlike throughput, these figures do not depend on what else the
// machine runs, and they bound what an idle machine can reach. The JVM figures include their background work
// (flushes, compactions, GC). Runs with FRONTIER_BENCH_CPU=1.
func TestIntegrationCPUPerOp(t *testing.T) {
	if os.Getenv("FRONTIER_BENCH_CPU") == "" {
		t.Skip("set FRONTIER_BENCH_CPU=1")
	}
	cfg := testConfig(t)
	c := openTest(t, cfg, statesTable, queueTable)
	ctx := t.Context()
	st := c.States()
	const n = 200000
	fps := make([]frontier.Fingerprint, n)
	es := make([]state.Entry, n)
	for i := range fps {
		fps[i] = benchFP(i)
		es[i].State = 2
	}
	measure := func(name string, ops int, f func()) {
		h0, t0 := jvmTicks(t)
		s0 := selfTicks()
		w := time.Now()
		f()
		h1, t1 := jvmTicks(t)
		s1 := selfTicks()
		t.Logf("%s: %d ops in %v wall; CPU per op: hbase %.1fµs, thrift %.1fµs, client %.1fµs", name, ops, time.Since(w).Round(time.Millisecond),
			float64(h1-h0)*1e4/float64(ops), float64(t1-t0)*1e4/float64(ops), (s1-s0)*1e4/float64(ops))
	}
	measure("states put", n, func() {
		if err := st.Put(ctx, fps, es); err != nil {
			t.Fatal(err)
		}
	})
	out, found := make([]state.Entry, n), make([]bool, n)
	measure("states get hits", n, func() {
		if err := st.Get(ctx, fps, out, found); err != nil {
			t.Fatal(err)
		}
	})
	miss := make([]frontier.Fingerprint, n)
	for i := range miss {
		miss[i] = benchFP(n + 1 + i)
	}
	measure("states get misses", n, func() {
		if err := st.Get(ctx, miss, out, found); err != nil {
			t.Fatal(err)
		}
	})
	q := c.Queue()
	rng := rand.New(rand.NewPCG(1, 2))
	items := make([]queue.Item, 100000)
	for i := range items {
		items[i] = benchItem(i, 10000, rng)
	}
	measure("queue schedule", len(items), func() {
		for lo := 0; lo < len(items); lo += 8192 {
			if err := q.Schedule(ctx, items[lo:min(lo+8192, len(items))]); err != nil {
				t.Fatal(err)
			}
		}
	})
	measure("queue next 1024 (x10)", 10, func() {
		for range 10 {
			if _, err := q.Next(ctx, 0, time.Now().Unix(), queue.Limits{Max: 1024, PerHost: 128, MinHosts: 24}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
