package pebblestore_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/pebblestore"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

type logRecorder struct{ lines []string }

func (l *logRecorder) Write(p []byte) (int, error) {
	l.lines = append(l.lines, string(p))
	return len(p), nil
}

func (l *logRecorder) has(s string) bool {
	for _, x := range l.lines {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func putStates(t *testing.T, s state.Store, lo, hi int) {
	t.Helper()
	var fps []frontier.Fingerprint
	var es []state.Entry
	for i := lo; i < hi; i++ {
		fps = append(fps, statetest.FP(i))
		es = append(es, state.Entry{State: frontier.Crawled})
	}
	if err := s.Put(t.Context(), fps, es); err != nil {
		t.Fatal(err)
	}
}

func checkStates(t *testing.T, s state.Store, lo, hi int) {
	t.Helper()
	var fps []frontier.Fingerprint
	for i := lo; i < hi; i++ {
		fps = append(fps, statetest.FP(i))
	}
	out, found := make([]state.Entry, len(fps)), make([]bool, len(fps))
	if err := s.Get(t.Context(), fps, out, found); err != nil {
		t.Fatal(err)
	}
	for i := range fps {
		if !found[i] || out[i].State != frontier.Crawled {
			t.Fatalf("fingerprint %d: found=%v %+v: the Bloom filter hid a stored URL", lo+i, found[i], out[i])
		}
	}
}

// TestBloomPersistence: a clean Close saves the filter and the next Open loads it; after a crash (no Close)
// the next Open rebuilds it from the states, so no stored fingerprint is ever reported new.
func TestBloomPersistence(t *testing.T) {
	fs := vfs.NewCrashableMem()
	cfg := testConfig(t, true)
	cfg.FS, cfg.Sync = fs, true
	open := func() (*pebblestore.DB, *logRecorder) {
		rec := &logRecorder{}
		db, err := pebblestore.Open(cfg, slog.New(slog.NewTextHandler(rec, &slog.HandlerOptions{Level: slog.LevelDebug})))
		if err != nil {
			t.Fatal(err)
		}
		return db, rec
	}

	db, _ := open()
	putStates(t, db.States(), 0, 1000)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, rec := open()
	if rec.has("rebuilt") {
		t.Fatalf("clean reopen rebuilt the filter: %v", rec.lines)
	}
	if got := db.BloomStore().Bloom().Count(); got < 990 {
		t.Fatalf("loaded filter counts %d fingerprints, want about 1000", got)
	}
	checkStates(t, db.States(), 0, 1000)
	putStates(t, db.States(), 1000, 2000) // not in the saved file

	crashed := fs.CrashClone(vfs.CrashCloneCfg{}) // kill -9: only synced data survives
	db.Close()
	cfg.FS = crashed
	db, rec = open()
	defer db.Close()
	if !rec.has("rebuilt") {
		t.Fatalf("reopen after a crash did not rebuild the filter: %v", rec.lines)
	}
	checkStates(t, db.States(), 0, 2000)
	bs := db.BloomStore()
	before := bs.Skipped.Load()
	out, found := make([]state.Entry, 1), make([]bool, 1)
	for i := 5000; i < 6000; i++ {
		if err := bs.Get(t.Context(), []frontier.Fingerprint{statetest.FP(i)}, out, found); err != nil || found[0] {
			t.Fatalf("new fingerprint %d: %v %v", i, found[0], err)
		}
	}
	if skipped := bs.Skipped.Load() - before; skipped < 950 {
		t.Fatalf("filter skipped only %d of 1000 store reads for new URLs", skipped)
	}
}

func TestBloomDesignChange(t *testing.T) {
	cfg := testConfig(t, true)
	db, err := pebblestore.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	putStates(t, db.States(), 0, 100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.Bloom.Expected *= 2
	db, err = pebblestore.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.BloomStore().Bloom().Config(); got != cfg.Bloom {
		t.Fatalf("filter design %+v, want the new %+v", got, cfg.Bloom)
	}
	checkStates(t, db.States(), 0, 100)
}

func TestConfigValidate(t *testing.T) {
	c := pebblestore.DefaultConfig()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "dir") {
		t.Fatalf("default config without dir: %v", err)
	}
	c.Dir, c.ScoreBuckets, c.CacheBytes, c.PageCacheBytes, c.PageFilterBytes = "x", 0, -1, -1, 1<<40
	c.Bloom.FPRate = 2
	err := c.Validate()
	for _, want := range []string{"score_buckets", "cache_bytes", "fp_rate", "page cache bytes = -1", "page filter bytes = 1099511627776"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want a problem with %s", err, want)
		}
	}
}

// TestBloomDisabledInBetween: states written while the filter was disabled must not be hidden by the filter
// saved before, when a later Open enables it again.
func TestBloomDisabledInBetween(t *testing.T) {
	cfg := testConfig(t, true)
	open := func(cfg pebblestore.Config) *pebblestore.DB {
		db, err := pebblestore.Open(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open(cfg)
	putStates(t, db.States(), 0, 100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	off := cfg
	off.Bloom = state.BloomConfig{}
	db = open(off)
	putStates(t, db.States(), 100, 200)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(cfg)
	defer db.Close()
	checkStates(t, db.States(), 0, 200)
}

// TestBloomMaxBytes: Config.BloomMaxBytes caps the filter of a new database and of one whose saved filter is
// loaded, and no stored state is hidden by a capped filter.
func TestBloomMaxBytes(t *testing.T) {
	cfg := testConfig(t, true)
	cfg.FS = vfs.NewMem()
	cfg.Bloom = state.BloomConfig{Expected: 1000, FPRate: 0.01}
	cfg.BloomMaxBytes = 1 // below the first layer: it never grows
	db, err := pebblestore.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	putStates(t, db.States(), 0, 3000)
	if b := db.BloomStore().Bloom(); b.Layers() != 1 || !b.Full() {
		t.Fatalf("new database: %d layers (full %v) after 3,000 states under a 1-byte cap, want 1 and full", b.Layers(), b.Full())
	}
	checkStates(t, db.States(), 0, 3000)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = pebblestore.Open(cfg, nil); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	putStates(t, db.States(), 3000, 6000)
	if b := db.BloomStore().Bloom(); b.Layers() != 1 || !b.Full() {
		t.Fatalf("loaded filter: %d layers (full %v) under the cap, want 1 and full", b.Layers(), b.Full())
	}
	checkStates(t, db.States(), 0, 6000)
}
