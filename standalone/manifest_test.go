package standalone

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestManifest(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "pebble")
	want := Manifest{Canonicalization: "w3lib-2.5", Fingerprint: "sha1", Codec: "msgpack", Spiders: 2, StrategyWorkers: 2}
	resumed, err := checkManifest(dir, store, want)
	if err != nil || resumed {
		t.Fatalf("first check = %v, %v; want a new crawl", resumed, err)
	}
	if resumed, err := checkManifest(dir, store, want); err != nil || !resumed {
		t.Fatalf("second check = %v, %v; want a resumed crawl", resumed, err)
	}
	if got, ok, err := ReadManifest(dir); err != nil || !ok || got != want {
		t.Fatalf("ReadManifest = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if got, ok, err := ReadManifest(t.TempDir()); err != nil || ok {
		t.Fatalf("ReadManifest of a new directory = %+v, %v, %v; want none and no error", got, ok, err)
	}
	for _, tc := range []struct {
		change func(*Manifest)
		want   string
	}{
		{func(m *Manifest) { m.Fingerprint = "md5" }, `identity.fingerprint "sha1" (this run asks for "md5")`},
		{func(m *Manifest) { m.Canonicalization = "w3lib-1.22" }, `identity.canonicalization "w3lib-2.5"`},
		{func(m *Manifest) { m.Codec = "json" }, `codec "msgpack"`},
		{func(m *Manifest) { m.Spiders = 3; m.StrategyWorkers = 1 }, "standalone.spiders = 2 (this run asks for 3), standalone.strategy_workers = 2"},
	} {
		m := want
		tc.change(&m)
		_, err := checkManifest(dir, store, m)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("check with %+v = %v, want an error naming %s and %q", m, err, dir, tc.want)
		}
	}
	// A store written before manifests existed is a resumed crawl, and gets one.
	old := t.TempDir()
	if err := os.MkdirAll(filepath.Join(old, "pebble"), 0o755); err != nil {
		t.Fatal(err)
	}
	if resumed, err := checkManifest(old, filepath.Join(old, "pebble"), want); err != nil || !resumed {
		t.Fatalf("check of a store without a manifest = %v, %v; want resumed", resumed, err)
	}
	if _, err := os.Stat(filepath.Join(old, ManifestFile)); err != nil {
		t.Fatal(err)
	}
	// A corrupt manifest is named.
	if err := os.WriteFile(filepath.Join(old, ManifestFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := checkManifest(old, filepath.Join(old, "pebble"), want); err == nil || !strings.Contains(err.Error(), ManifestFile) {
		t.Fatalf("check of a corrupt manifest = %v, want an error naming it", err)
	}
	if _, ok, err := ReadManifest(old); err == nil || ok {
		t.Fatalf("ReadManifest of a corrupt manifest = %v, %v; want an error", ok, err)
	}
}
