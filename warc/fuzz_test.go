package warc

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReader feeds arbitrary bytes (plain and gzipped) to the Reader: it must return records or an error,
// never panic or hang.
func FuzzReader(f *testing.F) {
	f.Add([]byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 2\r\n\r\nhi\r\n\r\n"))
	f.Add([]byte("WARC/1.0\r\nWARC-Type: response\r\nWARC-Payload-Digest: sha1:AAAA\r\nContent-Length: 4\r\n\r\n\r\n\r\n\r\n\r\n"))
	f.Add([]byte("WARC/1.1\r\nX: a\r\n continued\r\nContent-Length: 99999999999\r\n\r\n"))
	f.Add([]byte("WARC/1.1\r\nContent-Length: -1\r\n\r\n"))
	f.Add([]byte("\x1f\x8b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, gz(data)} {
			r := NewReader(bytes.NewReader(in))
			r.MaxBlock = 1 << 20
			for range 100 {
				rec, err := r.Next()
				if err != nil {
					break
				}
				rec.Verify()
			}
		}
	})
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// FuzzWriteRecord round-trips arbitrary fields and blocks through the Writer and the Reader: what the Writer
// accepts must read back identically with valid digests, and what it refuses must leave the file untouched.
func FuzzWriteRecord(f *testing.F) {
	f.Add("response", "http://a.test/", "X-Name", "value", []byte("HTTP/1.1 200 OK\r\n\r\nbody"))
	f.Add("resource", "urn:x", "WARC-Concurrent-To", "<urn:uuid:1>", []byte{})
	f.Add("metadata", "", "Bad Name", "v", []byte("a: b\r\n"))
	f.Add("request", "http://a.test/\r\n", "X", "\x00", []byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add("response", "http://a.test/", "Content-Length", "1", []byte("\r\n\r\n\r\n"))
	f.Fuzz(func(t *testing.T, typ, target, name, value string, block []byte) {
		cfg := DefaultConfig()
		cfg.Dir = t.TempDir()
		cfg.Hostname = "fuzz"
		cfg.CompressionLevel = 1
		w, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := &Record{Type: typ, TargetURI: target, ContentType: ContentTypeHTTPResponse,
			Fields: Fields{{name, value}}, Block: block, Date: time.Unix(1, 0)}
		_, werr := w.Write(rec)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files := w.Files()
		if werr != nil {
			if len(files) != 0 {
				t.Fatalf("a refused record (%v) opened a file", werr)
			}
			return
		}
		fh, err := os.Open(filepath.Join(files[0]))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		r := NewReader(fh)
		if _, err := r.Next(); err != nil { // warcinfo
			t.Fatal(err)
		}
		got, err := r.Next()
		if err != nil {
			t.Fatalf("record written from %q %q %q=%q does not read back: %v", typ, target, name, value, err)
		}
		if err := got.Verify(); err != nil {
			t.Fatal(err)
		}
		if got.Type() != typ || got.Fields.Get("WARC-Target-URI") != target || !bytes.Equal(got.Block, block) || got.ID() != rec.ID {
			t.Fatalf("read back %v %q, wrote %q %q", got.Fields, got.Block, typ, block)
		}
		if v := got.Fields.Get(name); v != trimSpace(value) {
			t.Fatalf("field %s = %q, wrote %q", name, v, value)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the record: %v, want EOF", err)
		}
	})
}

func trimSpace(s string) string { return string(bytes.TrimSpace([]byte(s))) }
