package pebblestore_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/frontiercrawl/frontier/frontiertest"
	"github.com/frontiercrawl/frontier/pebblestore"
)

// TestPebbleLogsToSlog: Pebble's own lines (here the WAL replayed when a database is opened again) go to the
// store's slog logger at Debug, prefixed "pebble: ", and not to Pebble's default logger (stderr); Close logs
// Pebble's write metrics.
func TestPebbleLogsToSlog(t *testing.T) {
	fs := vfs.NewMem()
	var out frontiertest.SyncBuffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := pebblestore.DefaultConfig()
	cfg.Dir, cfg.FS, cfg.Bloom.Expected = "db", fs, 0
	for range 2 { // the second Open replays the first one's WAL
		db, err := pebblestore.Open(cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Pebble().Set([]byte("a"), []byte("b"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var replay string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "replayed") {
			replay = line
		}
	}
	if !strings.Contains(replay, "level=DEBUG") || !strings.Contains(replay, `msg="pebble: [JOB`) {
		t.Fatalf("no WAL replay line at Debug prefixed \"pebble: \" in the store's log:\n%s", out.String())
	}

	// Close logs what Pebble wrote (Info) and its metrics table (Debug).
	if got := out.String(); !strings.Contains(got, `level=INFO msg="pebble: metrics" wal_in_mib=`) ||
		!strings.Contains(got, "pebble: metrics table") {
		t.Fatalf("no metrics lines at Close in the store's log:\n%s", got)
	}

	// Logger(nil) discards, and errors go out at Error.
	pebblestore.Logger(nil).Errorf("dropped %d", 1)
	var errOut frontiertest.SyncBuffer
	pebblestore.Logger(slog.New(slog.NewTextHandler(&errOut, nil))).Errorf("disk %s", "full")
	if got := errOut.String(); !strings.Contains(got, "level=ERROR") || !strings.Contains(got, `msg="pebble: disk full"`) {
		t.Fatalf("Errorf logged %q, want an Error line \"pebble: disk full\"", got)
	}
}
