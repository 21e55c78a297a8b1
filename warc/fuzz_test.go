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

// FuzzWholeRecords feeds arbitrary bytes, and cuts of a real file, to the recovery reader: the prefix it keeps
// must read back as exactly the records it counted, and it must never panic or keep more than it was given.
func FuzzWholeRecords(f *testing.F) {
	whole := writtenFile(f, 2)
	f.Add(whole)
	f.Add(whole[:len(whole)-5])
	f.Add(whole[:len(whole)/2])
	f.Add([]byte{})
	f.Add([]byte("\x1f\x8b"))
	f.Add(append(bytes.Clone(whole), 0x1f, 0x8b, 8, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		end, n, err := wholeRecords(bytes.NewReader(data), 1<<20) // a small MaxBlock: no gzip bomb of a GiB

		if err != nil {
			t.Fatalf("a bytes.Reader does not fail, yet: %v", err)
		}
		if end < 0 || end > int64(len(data)) || (n == 0) != (end == 0) {
			t.Fatalf("end %d, %d records, for %d bytes", end, n, len(data))
		}
		r := NewReader(bytes.NewReader(data[:end]))
		r.MaxBlock = 1 << 20
		for i := range n {
			if _, err := r.Next(); err != nil {
				t.Fatalf("record %d of the kept prefix: %v", i, err)
			}
		}
		if n > 0 {
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("the kept prefix holds more than %d records: %v", n, err)
			}
		}
	})
}
