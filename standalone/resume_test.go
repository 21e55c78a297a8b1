package standalone

import (
	"context"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/pebblestore"
)

// resumeSetup serves a plain web of hosts × pages and returns a standalone configuration (two spiders, two
// strategy workers, stopping when done) and dependencies that crawl it from its seeds, logging to logs.
func resumeSetup(t *testing.T, hosts, pages int) (*web.Site, Config, Deps, *frontiertest.SyncBuffer) {
	t.Helper()
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = hosts, pages, true
	site := web.Start(t, wcfg)
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Spiders, cfg.StrategyWorkers = 2, 2
	cfg.StopWhenDone, cfg.QuietPeriod = true, 300*time.Millisecond
	cfg.Canonicalization, cfg.Fingerprint = "w3lib-2.5", "sha1"
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logs := new(frontiertest.SyncBuffer)
	return site, cfg, Deps{Seeds: seeds, Identity: id, DialContext: site.DialContext,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}, logs
}

// stopMidway runs a crawl and stops it (its context ends, as on SIGTERM) once stop reports true. A crawl that
// finishes before that fails the test: what follows would resume a finished crawl, not a stopped one.
func stopMidway(t *testing.T, cfg Config, deps Deps, stop func() bool) Summary {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stopped atomic.Bool
	go func() {
		for !stop() {
			if ctx.Err() != nil {
				return // the crawl ended first
			}
			time.Sleep(5 * time.Millisecond)
		}
		stopped.Store(true)
		cancel()
	}()
	sum, err := Run(ctx, cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	if !stopped.Load() {
		t.Fatalf("the crawl finished (%d pages) before the point where it was to be stopped", sum.Pages)
	}
	return sum
}

// TestStopAndResume stops a crawl mid-way (the context ends, as on SIGTERM) and resumes it without seeds:
// the second run says it resumes, and between them every reachable page is fetched exactly once.
func TestStopAndResume(t *testing.T) {
	site, cfg, deps, logs := resumeSetup(t, 4, 25)
	cfg.Spider.Delay = 20 * time.Millisecond
	first := stopMidway(t, cfg, deps, func() bool { return site.Hosts()[0].RequestCount()+site.Hosts()[1].RequestCount() >= 15 })
	deps.Seeds = ""
	second, err := Run(t.Context(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	if !strings.Contains(logs.String(), "resuming "+cfg.DataDir) {
		t.Errorf("the second run did not say it resumes:\n%s", logs.String())
	}
	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Missing) > 0 || second.Queued != 0 {
		t.Errorf("after a stop and a resume (%d + %d pages): missing %v, still queued %d", first.Pages, second.Pages, check.Missing, second.Queued)
	}
	if len(check.Twice) > 0 {
		t.Logf("fetched twice (in flight at the stop): %v", check.Twice)
	}
	t.Logf("first run %d pages, second %d, reachable %d", first.Pages, second.Pages, check.Reachable)
}

// TestResumeRetiresStatsGroup resumes a data directory whose spider log still remembers the consumer group
// that earlier versions ran for the stats line: the resumed crawl retires the group, finishes with every page
// fetched, and leaves nothing on the spider log, where the remembered group would have held back every
// message after its offset.
func TestResumeRetiresStatsGroup(t *testing.T) {
	site, cfg, deps, logs := resumeSetup(t, 3, 20)
	stopMidway(t, cfg, deps, func() bool { return site.Hosts()[0].RequestCount() >= 8 })

	// What an earlier version left: its stats group's committed offsets, written in the bus's key layout
	// (package pebblebus: 'B' 'o' stream partition group → the next offset to read), at 0, so that the group
	// would hold every message the resumed crawl writes.
	withDB := func(f func(*pebble.DB)) {
		pcfg := pebblestore.DefaultConfig()
		pcfg.Dir, pcfg.Sync = filepath.Join(cfg.DataDir, "pebble"), false
		db, err := pebblestore.Open(pcfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		f(db.Pebble())
	}
	withDB(func(db *pebble.DB) {
		for p := range cfg.StrategyWorkers {
			key := binary.BigEndian.AppendUint32([]byte("Bol"), uint32(p))
			if err := db.Set(append(key, retiredStatsGroup...), make([]byte, 8), pebble.Sync); err != nil {
				t.Fatal(err)
			}
		}
	})

	deps.Seeds = ""
	second, err := Run(t.Context(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	requireAccounted(t, cfg.DataDir)
	if !strings.Contains(logs.String(), "retired consumer groups") {
		t.Errorf("the resumed crawl did not retire the stats group:\n%s", logs.String())
	}
	check, err := site.CheckCrawl(site.Seeds()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Missing) > 0 || second.Queued != 0 {
		t.Errorf("after the resume: missing %v, still queued %d", check.Missing, second.Queued)
	}
	withDB(func(db *pebble.DB) {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte("Bml"), UpperBound: []byte("Bmm")})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		if it.First() {
			t.Errorf("the finished crawl's spider log still holds segments (the first: key %x)", it.Key())
		}
	})
}
