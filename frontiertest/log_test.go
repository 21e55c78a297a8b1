package frontiertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fakeTB struct {
	testing.TB
	lines    []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Log(args ...any)   { f.lines = append(f.lines, args[0].(string)) }
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

func TestLogger(t *testing.T) {
	f := &fakeTB{}
	log := Logger(f)
	log.Debug("hello", "partition", 3)
	log.With("role", "spider").Info("fetched", "url", "http://host1.test/")
	if len(f.lines) != 2 || f.lines[0] != "level=DEBUG msg=hello partition=3" ||
		!strings.Contains(f.lines[1], "role=spider") || !strings.Contains(f.lines[1], "url=http://host1.test/") {
		t.Fatalf("lines %q", f.lines)
	}
	for _, c := range f.cleanups {
		c()
	}
	log.Info("after the test")
	if len(f.lines) != 2 {
		t.Errorf("a record logged after cleanup reached the test log: %q", f.lines)
	}
	DiscardLogger().Error("nowhere")
	Logger(t).Info("real test log works")
}

func TestRepoRoot(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(RepoRoot(t), "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/frontiercrawl/frontier\n") {
		t.Fatalf("RepoRoot's go.mod: %v %.60q", err, mod)
	}
}
