package codec

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFronteraDecodesOurs writes Go-encoded bytes for every vector and has Frontera's own decoders read them
// (oracle/check_codec.py under the oracle venv): direction 3, "Frontera reads ours". It skips when the venv is
// missing (build it with oracle/setup.sh), except under CI=true, where that is a failure.
func TestFronteraDecodesOurs(t *testing.T) {
	python, err := filepath.Abs("../.venv/oracle/bin/python")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("oracle venv missing (%v); CI must build it with oracle/setup.sh", err)
		}
		t.Skipf("oracle venv missing (%v); build it with oracle/setup.sh", err)
	}
	path := filepath.Join(t.TempDir(), "ours.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	var n int
	for _, v := range loadVectors(t) {
		if v.Lossy {
			continue
		}
		mp, err := v.encode(Msgpack{})
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		line := map[string]any{"name": v.Name, "msg": v.Msg, "msgpack": hex.EncodeToString(mp), "json": nil}
		if js, err := v.encode(JSON{}); err == nil {
			line["json"] = string(js)
		}
		if err := enc.Encode(line); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), python, "../oracle/check_codec.py", path)
	out, err := cmd.CombinedOutput()
	t.Logf("%d messages: %s", n, strings.TrimSpace(lastLine(string(out))))
	if err != nil {
		t.Fatalf("Frontera's decoders disagree with our bytes: %v\n%s", err, out)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
