package launch

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/frontiercrawl/frontier/frontiertest"
)

// TestCustomStrategyExample builds examples/customstrategy (its own module: a strategy written outside this
// one, and a main that registers it and calls Main) and crawls a small loopback site with it. The example is
// copied to a temporary directory with its replace directive pointed at this checkout, so the test never
// rewrites the repository's files.
func TestCustomStrategyExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: skipped with -short")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("no go command at %s", goBin)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(root, "examples", "customstrategy")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	goCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	goCmd("mod", "edit", "-replace", "github.com/frontiercrawl/frontier="+root)
	bin := filepath.Join(dir, "mystandalone")
	goCmd("build", "-o", bin, "./cmd/mystandalone")

	// The site: a home page linking a deep page (4 segments: over max_segments) and two shallow ones.
	mux := http.NewServeMux()
	page := func(links ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<html><body>")
			for _, l := range links {
				fmt.Fprintf(w, `<a href="%s">x</a>`, l)
			}
			fmt.Fprint(w, "</body></html>")
		}
	}
	var mu sync.Mutex
	var fetched []string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched = append(fetched, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			page("/a", "/a/b", "/a/b/c/d")(w, r)
		case "/a", "/a/b", "/a/b/c/d":
			page()(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(srv.URL+"/ 0.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", filepath.Join(root, "configs", "standalone.yaml"), "--seeds", seeds,
		"--set", "strategy_worker.strategy=shortpath", "--set", "strategy_worker.options.max_segments=3",
		"--set", "standalone.data_dir="+filepath.Join(dir, "data"), "--set", "standalone.quiet_period=300ms",
		"--set", "spider.delay=10ms")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("mystandalone: %v\n%s", err, out.String())
	}
	frontiertest.RequireStandaloneAccounted(t, filepath.Join(dir, "data"))
	m := regexp.MustCompile(`pages fetched\s+(\d+)`).FindStringSubmatch(out.String())
	if m == nil || m[1] != "3" {
		t.Errorf("the crawl's summary does not say 3 pages fetched (/, /a, /a/b; /a/b/c/d is too deep):\n%s", out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range fetched {
		if p == "/a/b/c/d" {
			t.Errorf("the page over max_segments was fetched: %v", fetched)
		}
	}
}
