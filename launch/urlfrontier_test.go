package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestURLFrontierSeedsNeedTwoSpiders: with --seeds the gateway takes the last spider-feed partition, so one
// spider would leave none to crawl the seeds; the start fails naming the setting, before anything is opened.
func TestURLFrontierSeedsNeedTwoSpiders(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("http://a.test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Run(t.Context(), "standalone", []string{"--config", "../configs/standalone.yaml", "--set", "metrics.addr=127.0.0.1:0",
		"--set", "standalone.data_dir=" + filepath.Join(dir, "data"), "--set", "standalone.spiders=1",
		"--urlfrontier", "127.0.0.1:0", "--seeds", seeds})
	if err == nil || !strings.Contains(err.Error(), "standalone.spiders") {
		t.Fatalf("standalone --urlfrontier --seeds with one spider: %v, want an error naming standalone.spiders", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("the data directory was created by a start that failed its settings")
	}
}
