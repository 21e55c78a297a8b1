package standalone

import (
	"context"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/frontiertest/web"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/pebblestore"
)

// TestStopAndResume stops a crawl mid-way (the context ends, as on SIGTERM) and resumes it without seeds:
// the second run says it resumes, and between them every reachable page is fetched exactly once.
func TestStopAndResume(t *testing.T) {
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 4, 25, true
	site := web.Start(t, wcfg)
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(site.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Spiders, cfg.StrategyWorkers = 2, 2
	cfg.Spider.Delay = 20 * time.Millisecond
	cfg.StopWhenDone, cfg.QuietPeriod = true, 300*time.Millisecond
	cfg.Canonicalization, cfg.Fingerprint = "w3lib-2.5", "sha1"
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logs frontiertest.SyncBuffer
	deps := Deps{Seeds: seeds, Identity: id, DialContext: site.DialContext,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for site.Hosts()[0].RequestCount()+site.Hosts()[1].RequestCount() < 15 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	first, err := Run(ctx, cfg, deps)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
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
	wcfg := web.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Plain = 3, 20, true
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
	id, err := identity.New("sha1", identity.CanonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logs frontiertest.SyncBuffer
	deps := Deps{Seeds: seeds, Identity: id, DialContext: site.DialContext,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for site.Hosts()[0].RequestCount() < 8 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	if _, err := Run(ctx, cfg, deps); err != nil {
		t.Fatal(err)
	}
	cancel()

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
		n := 0
		for it.First(); it.Valid(); it.Next() {
			n++
		}
		if n != 0 {
			t.Errorf("the finished crawl's spider log holds %d segments, want 0", n)
		}
	})
}
