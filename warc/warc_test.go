package warc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testConfig(t testing.TB) Config {
	cfg := DefaultConfig()
	cfg.Dir = t.TempDir()
	cfg.Hostname = "spider-0"
	cfg.Operator = "frontier tests"
	cfg.UserAgent = "frontier-test/1.0"
	return cfg
}

func newWriter(t testing.TB, cfg Config) *Writer {
	t.Helper()
	w, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// readDir reads every record of every .warc.gz file in dir with the test Reader, verifying digests.
func readDir(t *testing.T, dir string) map[string][]*ReadRecord {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	out := map[string][]*ReadRecord{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(fh)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if err := rec.Verify(); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			out[f] = append(out[f], rec)
		}
		fh.Close()
	}
	return out
}

func exchange(i int) *Exchange {
	body := bytes.Repeat(fmt.Appendf(nil, "<p>page %d</p>\n", i), 10+i%50)
	return &Exchange{
		URL:          fmt.Sprintf("http://host%d.test/page%d.html", i%7, i),
		Date:         time.Date(2026, 11, 22, 5, 0, 0, i*1000, time.UTC),
		IP:           fmt.Sprintf("127.0.0.%d", 2+i%7),
		Request:      fmt.Appendf(nil, "GET /page%d.html HTTP/1.1\r\nHost: host%d.test\r\nUser-Agent: frontier-test/1.0\r\n\r\n", i, i%7),
		ResponseHead: fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", len(body)),
		Body:         body,
		Metadata:     Fields{{"fetchTimeMs", fmt.Sprint(i)}, {"outlink", "http://host1.test/ L a/@href"}},
	}
}

var nameRE = regexp.MustCompile(`^frontier-\d{17}-\d{5}-spider-0\.warc\.gz$`)

func TestWriteExchange(t *testing.T) {
	cfg := testConfig(t)
	w := newWriter(t, cfg)
	ex := exchange(3)
	ex.Truncated = "length"
	ex.ResponseFields = Fields{{"WARC-Identified-Payload-Type", "text/html"}}
	ids, err := w.WriteExchange(ex)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := w.WriteExchange(ex); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
	files := w.Files()
	if len(files) != 1 || !nameRE.MatchString(filepath.Base(files[0])) || ids.File != files[0] {
		t.Fatalf("files %v (exchange in %q), want one named like %s", files, ids.File, nameRE)
	}
	recs := readDir(t, cfg.Dir)[files[0]]
	if len(recs) != 4 {
		t.Fatalf("%d records, want warcinfo, request, response, metadata", len(recs))
	}
	info, req, resp, meta := recs[0], recs[1], recs[2], recs[3]
	for _, c := range []struct {
		rec   *ReadRecord
		field string
		want  string
	}{
		{info, "WARC-Type", "warcinfo"},
		{info, "WARC-Filename", filepath.Base(files[0])},
		{info, "Content-Type", "application/warc-fields"},
		{req, "WARC-Type", "request"},
		{req, "WARC-Record-ID", ids.Request},
		{req, "WARC-Concurrent-To", ids.Response},
		{req, "WARC-Target-URI", ex.URL},
		{req, "WARC-Date", "2026-11-22T05:00:00.000003Z"},
		{req, "Content-Type", "application/http;msgtype=request"},
		{req, "WARC-IP-Address", "127.0.0.5"},
		{resp, "WARC-Type", "response"},
		{resp, "WARC-Record-ID", ids.Response},
		{resp, "WARC-IP-Address", "127.0.0.5"},
		{resp, "WARC-Truncated", "length"},
		{resp, "WARC-Identified-Payload-Type", "text/html"},
		{resp, "Content-Type", "application/http;msgtype=response"},
		{resp, "WARC-Payload-Digest", Digest(ex.Body)},
		{resp, "WARC-Block-Digest", Digest(append(append([]byte(nil), ex.ResponseHead...), ex.Body...))},
		{meta, "WARC-Type", "metadata"},
		{meta, "WARC-Record-ID", ids.Metadata},
		{meta, "WARC-Concurrent-To", ids.Response},
	} {
		if got := c.rec.Fields.Get(c.field); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.rec.Type(), c.field, got, c.want)
		}
	}
	if !bytes.Equal(resp.Block, append(append([]byte(nil), ex.ResponseHead...), ex.Body...)) || !bytes.Equal(req.Block, ex.Request) {
		t.Error("blocks differ from what was written")
	}
	if string(meta.Block) != "fetchTimeMs: 3\r\noutlink: http://host1.test/ L a/@href\r\n" {
		t.Errorf("metadata block %q", meta.Block)
	}
	if !bytes.Contains(info.Block, []byte("operator: frontier tests\r\n")) || !bytes.Contains(info.Block, []byte("http-header-user-agent: frontier-test/1.0\r\n")) {
		t.Errorf("warcinfo block %q", info.Block)
	}
	if req.Offset != ids.Offset || ids.Offset == 0 {
		t.Errorf("request record at offset %d, WriteExchange said %d", req.Offset, ids.Offset)
	}
	if st := w.Stats(); st.Records != 4 || st.Bytes != fileSize(t, files[0]) {
		t.Errorf("stats %+v, file size %d", st, fileSize(t, files[0]))
	}
	runChecker(t, cfg.Dir, 4)
}

func fileSize(t *testing.T, f string) int64 {
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestRotationAndConcurrency(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxFileSize = 20 << 10
	w := newWriter(t, cfg)
	const writers, each = 4, 60
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := w.WriteExchange(exchange(g*each + i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	open, _ := filepath.Glob(filepath.Join(cfg.Dir, "*"+OpenSuffix))
	if len(open) > 0 {
		t.Errorf("files left open: %v", open)
	}
	all := readDir(t, cfg.Dir)
	if len(all) < 3 || len(all) != len(w.Files()) {
		t.Fatalf("%d files (writer says %d), want several at 20 KiB each", len(all), len(w.Files()))
	}
	seen := map[string]bool{}
	total := 0
	for f, recs := range all {
		if !nameRE.MatchString(filepath.Base(f)) {
			t.Errorf("file name %s", f)
		}
		if fileSize(t, f) > cfg.MaxFileSize+8<<10 {
			t.Errorf("%s: %d bytes, more than one exchange past the limit", f, fileSize(t, f))
		}
		if recs[0].Type() != TypeWarcinfo {
			t.Errorf("%s starts with %s", f, recs[0].Type())
		}
		// Exchanges are contiguous: request, response, metadata.
		for i := 1; i < len(recs); i += 3 {
			if i+2 >= len(recs) || recs[i].Type() != TypeRequest || recs[i+1].Type() != TypeResponse || recs[i+2].Type() != TypeMetadata ||
				recs[i].Fields.Get("WARC-Concurrent-To") != recs[i+1].ID() || recs[i+2].Fields.Get("WARC-Concurrent-To") != recs[i+1].ID() {
				t.Fatalf("%s: records %d.. are not one exchange", f, i)
			}
			u := recs[i+1].Fields.Get("WARC-Target-URI")
			if seen[u] {
				t.Errorf("%s written twice", u)
			}
			seen[u] = true
			total++
		}
	}
	if total != writers*each {
		t.Errorf("%d exchanges read, %d written", total, writers*each)
	}
	runChecker(t, cfg.Dir, w.Stats().Records)
}

func TestRejectsBadInput(t *testing.T) {
	w := newWriter(t, testConfig(t))
	defer w.Close()
	for name, tc := range map[string]struct {
		rec  *Record
		want string
	}{
		"no type":          {&Record{Block: []byte("x")}, "without a type"},
		"CRLF in a value":  {&Record{Type: TypeResource, TargetURI: "http://a/\r\nWARC-Type: evil"}, "control byte"},
		"bad name":         {&Record{Type: TypeResource, Fields: Fields{{"Bad Name", "v"}}}, "not allowed"},
		"writer's field":   {&Record{Type: TypeResource, Fields: Fields{{"content-length", "5"}}}, "set by the writer"},
		"newline in field": {&Record{Type: TypeResource, Fields: Fields{{"X-A", "a\nb"}}}, "control byte"},
	} {
		if _, err := w.Write(tc.rec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}
	ex := exchange(1)
	ex.ResponseHead = []byte("HTTP/1.1 200 OK\r\n")
	if _, err := w.WriteExchange(ex); err == nil || !strings.Contains(err.Error(), ex.URL) {
		t.Errorf("incomplete response head: %v", err)
	}
	ex = exchange(1)
	ex.Metadata = Fields{{"outlink", "a\r\nb"}}
	if _, err := w.WriteExchange(ex); err == nil {
		t.Error("metadata with CRLF accepted")
	}
	if st := w.Stats(); st.Records != 0 {
		t.Errorf("rejected input wrote %d records", st.Records)
	}
	// A good record still goes through after the bad ones: validation errors are not sticky.
	if _, err := w.Write(&Record{Type: TypeResource, TargetURI: "urn:x", ContentType: "text/plain", Block: []byte("ok")}); err != nil {
		t.Error(err)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := DefaultConfig()
	bad.Prefix = "a b"
	bad.MaxFileSize = 0
	bad.CompressionLevel = 12
	bad.Operator = "x\ny"
	err := bad.Validate()
	for _, want := range []string{"dir is required", "prefix", "max_file_size", "compression_level", "operator"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
	if _, err := New(bad, nil); err == nil {
		t.Error("New accepted a bad config")
	}
	if got := safeHost("host:8080/ü"); got != "host_8080__" {
		t.Errorf("safeHost = %q", got)
	}
}

func TestFlushMakesRecordsReadable(t *testing.T) {
	cfg := testConfig(t)
	w := newWriter(t, cfg)
	defer w.Close()
	if _, err := w.WriteExchange(exchange(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	open, _ := filepath.Glob(filepath.Join(cfg.Dir, "*.warc.gz"+OpenSuffix))
	if len(open) != 1 {
		t.Fatalf("open files %v", open)
	}
	f, _ := os.Open(open[0])
	defer f.Close()
	r := NewReader(f)
	n := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d records readable after Flush, want 4", n)
	}
	if err := w.Rotate(); err != nil || len(w.Files()) != 1 {
		t.Errorf("Rotate: %v, files %v", err, w.Files())
	}
}

// runChecker validates the files in dir with warcio (oracle/check_warc.py), an independent reader.
func runChecker(t *testing.T, dir string, wantRecords int64) map[string]any {
	t.Helper()
	py, script := filepath.Join("..", ".venv", "oracle", "bin", "python"), filepath.Join("..", "oracle", "check_warc.py")
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the oracle venv is missing (%v): run oracle/setup.sh", err)
		}
		t.Logf("skipping the warcio check: %v (run oracle/setup.sh)", err)
		return nil
	}
	out, err := exec.Command(py, script, "--names", dir).Output()
	var summary map[string]any
	if jerr := json.Unmarshal(out, &summary); jerr != nil {
		t.Fatalf("check_warc.py: %v; output %q (%v)", err, out, jerr)
	}
	if err != nil || len(summary["problems"].([]any)) > 0 {
		t.Fatalf("warcio found problems: %v\n%v", err, summary["problems"])
	}
	if got := int64(summary["records"].(float64)); got != wantRecords {
		t.Errorf("warcio read %d records, the writer wrote %d", got, wantRecords)
	}
	// And warcio's own command line checker, as a user would run it.
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	cli := exec.Command(filepath.Join("..", ".venv", "oracle", "bin", "warcio"), append([]string{"check", "-v"}, files...)...)
	if out, err := cli.CombinedOutput(); err != nil || !strings.Contains(string(out), "digest pass") || strings.Contains(string(out), "fail") {
		t.Errorf("warcio check: %v\n%s", err, out)
	}
	return summary
}

// TestCheckerCatchesBadFiles proves the warcio check is not vacuous: files with a wrong digest, two records in
// one gzip member, or a request concurrent to nothing are reported.
func TestCheckerCatchesBadFiles(t *testing.T) {
	py := filepath.Join("..", ".venv", "oracle", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the oracle venv is missing (%v)", err)
		}
		t.Skipf("the oracle venv is missing: %v", err)
	}
	w := newWriter(t, testConfig(t))
	defer w.Close()
	info := w.warcinfo("bad.warc.gz", time.Now())
	info.ID, info.Date = NewID(), time.Now()
	infoHead, err := recordHeader(nil, info, Digest(info.Block), "", len(info.Block))
	if err != nil {
		t.Fatal(err)
	}
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
	rec := func(typ, digest string, fields Fields, block []byte) []byte {
		r := &Record{Type: typ, ID: NewID(), Date: time.Now(), TargetURI: "http://a.test/", ContentType: "application/http;msgtype=" + typ, Fields: fields}
		h, err := recordHeader(nil, r, digest, Digest([]byte("hi")), len(block))
		if err != nil {
			t.Fatal(err)
		}
		return append(h, block...) // compress adds the CRLF CRLF that ends a record
	}
	for name, tc := range map[string]struct {
		members [][]byte
		want    string
	}{
		"wrong block digest": {[][]byte{rec(TypeResponse, Digest([]byte("other")), nil, resp)}, "block digest failed"},
		"two records in one member": {[][]byte{slices.Concat(rec(TypeResponse, Digest(resp), nil, resp), crlf2, rec(TypeResponse, Digest(resp), nil, resp))},
			"gzip"},
		"dangling concurrent-to": {[][]byte{rec(TypeRequest, Digest([]byte("GET / HTTP/1.1\r\n\r\n")), Fields{{"WARC-Concurrent-To", NewID()}}, []byte("GET / HTTP/1.1\r\n\r\n"))},
			"names no response"},
	} {
		dir := t.TempDir()
		var file []byte
		for _, m := range append([][]byte{slices.Concat(infoHead, info.Block)}, tc.members...) {
			c := w.compress(m)
			file = append(file, c.buf.Bytes()...)
		}
		if err := os.WriteFile(filepath.Join(dir, "bad.warc.gz"), file, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, filepath.Join("..", "oracle", "check_warc.py"), dir).Output()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: check_warc.py exit %v, output %s; want a problem containing %q", name, err, out, tc.want)
		}
	}
}

func TestIOErrorIsSticky(t *testing.T) {
	cfg := testConfig(t)
	w := newWriter(t, cfg)
	if _, err := w.WriteExchange(exchange(1)); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.mu.f.Close() // the disk goes away under the writer
	w.mu.Unlock()
	err := w.Flush()
	if err == nil {
		t.Fatal("Flush on a closed file succeeded")
	}
	if _, err2 := w.WriteExchange(exchange(2)); !errors.Is(err2, err) && err2.Error() != err.Error() {
		t.Errorf("write after an I/O error: %v, want the sticky %v", err2, err)
	}
	if err2 := w.Close(); err2 == nil {
		t.Error("Close after an I/O error returned nil")
	}
	open, _ := filepath.Glob(filepath.Join(cfg.Dir, "*"+OpenSuffix))
	if len(open) != 1 || len(w.Files()) != 0 {
		t.Errorf("open files %v, finished %v: a broken file must keep its .open name", open, w.Files())
	}
}
