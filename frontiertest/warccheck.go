package frontiertest

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// WARCSummary is what oracle/check_warc.py reports about a directory of WARC files.
type WARCSummary struct {
	Files     int            `json:"files"`
	Records   int            `json:"records"`
	ByType    map[string]int `json:"by_type"`
	Responses []WARCResponse `json:"responses"`
	Problems  []string       `json:"problems"`
}

// WARCResponse is one response record as warcio read it.
type WARCResponse struct {
	URI          string `json:"uri"`
	Status       int    `json:"status"`
	PayloadBytes int    `json:"payload_bytes"` // after warcio undid the Content-Encoding the HTTP head names
	Truncated    string `json:"truncated"`     // WARC-Truncated
	IP           string `json:"ip"`            // WARC-IP-Address
}

// RepoRoot returns the directory of the module's go.mod, found upwards from the working directory (a test's
// working directory is its package directory).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("frontiertest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// CheckWARC validates every WARC file in dir with warcio, an independent reader, through oracle/check_warc.py
// (records parsed, block and payload digests checked, one gzip member per record, warcinfo first, the file
// name pattern), fails the test if it reports any problem, and returns its summary. Without the oracle venv
// (.venv/oracle, made by oracle/setup.sh) it skips the test, or fails it when CI=true.
func CheckWARC(tb testing.TB, dir string) WARCSummary {
	tb.Helper()
	root := RepoRoot(tb)
	py := filepath.Join(root, ".venv", "oracle", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("frontiertest: the oracle venv is missing (%v): run oracle/setup.sh", err)
		}
		tb.Skipf("frontiertest: the oracle venv is missing (%v): run oracle/setup.sh", err)
	}
	out, err := exec.Command(py, filepath.Join(root, "oracle", "check_warc.py"), "--names", dir).Output()
	var sum WARCSummary
	if jerr := json.Unmarshal(out, &sum); jerr != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out = append(out, ee.Stderr...)
		}
		tb.Fatalf("frontiertest: check_warc.py: %v; output:\n%s", err, out)
	}
	if err != nil || len(sum.Problems) > 0 {
		tb.Fatalf("frontiertest: warcio found problems in %s (%v):\n%s", dir, err, jsonLines(sum.Problems))
	}
	return sum
}

func jsonLines(lines []string) string {
	b, _ := json.MarshalIndent(lines, "", " ")
	return string(b)
}
