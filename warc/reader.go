package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Reader reads the records of a WARC file, gzip-compressed (one member per record, as the Writer writes and
// WARC/1.1 Annex D recommends) or not. It exists for tests and tools; production readers are warcio, jwarc and
// the like. It uses the standard library's gzip, not the compressor the Writer uses. It is not safe for
// concurrent use.
type Reader struct {
	src    *countingReader
	gz     *gzip.Reader
	zipped bool
	// MaxBlock is the largest Content-Length accepted (default 1 GiB): a guard against corrupt lengths.
	MaxBlock int64
}

// ReadRecord is one record as read: the WARC version line, the named fields in order, and the block.
type ReadRecord struct {
	Version string // "WARC/1.1"
	Fields  Fields
	Block   []byte
	Offset  int64 // where the record (its gzip member, for compressed files) starts in the input
}

// Type returns the WARC-Type.
func (r *ReadRecord) Type() string { return r.Fields.Get("WARC-Type") }

// ID returns the WARC-Record-ID.
func (r *ReadRecord) ID() string { return r.Fields.Get("WARC-Record-ID") }

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = errors.New("warc: malformed input")

type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// NewReader returns a Reader of r; it detects gzip from the first bytes.
func NewReader(r io.Reader) *Reader {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(2)
	return &Reader{src: &countingReader{r: br}, zipped: len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b, MaxBlock: 1 << 30}
}

// Next returns the next record, or io.EOF after the last one. A compressed member that holds more or less
// than one record is an error.
func (r *Reader) Next() (*ReadRecord, error) {
	off := r.src.n
	if !r.zipped {
		if _, err := r.src.r.Peek(1); err == io.EOF {
			return nil, io.EOF
		}
		rec, err := r.parse(r.src.r)
		if err != nil {
			return nil, fmt.Errorf("record at offset %d: %w", off, err)
		}
		rec.Offset = off
		return rec, nil
	}
	var err error
	if r.gz == nil {
		r.gz, err = gzip.NewReader(r.src)
	} else {
		err = r.gz.Reset(r.src)
	}
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: gzip member at offset %d: %v", ErrFormat, off, err)
	}
	r.gz.Multistream(false)
	br := bufio.NewReader(r.gz)
	rec, err := r.parse(br)
	if err != nil {
		return nil, fmt.Errorf("record at offset %d: %w", off, err)
	}
	rest, err := io.Copy(io.Discard, br)
	if err != nil {
		return nil, fmt.Errorf("%w: gzip member at offset %d: %v", ErrFormat, off, err)
	}
	if rest != 0 {
		return nil, fmt.Errorf("%w: gzip member at offset %d holds %d bytes after its record", ErrFormat, off, rest)
	}
	rec.Offset = off
	return rec, nil
}

const maxHeader = 1 << 20

func (r *Reader) parse(br *bufio.Reader) (*ReadRecord, error) {
	var read int
	line := func() (string, error) {
		s, err := br.ReadString('\n')
		read += len(s)
		if read > maxHeader {
			return "", fmt.Errorf("%w: header longer than %d bytes", ErrFormat, maxHeader)
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", fmt.Errorf("%w: header: %v", ErrFormat, err)
		}
		if !strings.HasSuffix(s, "\r\n") {
			return "", fmt.Errorf("%w: header line %q does not end with CRLF", ErrFormat, s)
		}
		return s[:len(s)-2], nil
	}
	v, err := line()
	if err != nil {
		return nil, err
	}
	if v != "WARC/1.1" && v != "WARC/1.0" {
		return nil, fmt.Errorf("%w: version line %q, want WARC/1.1 or WARC/1.0", ErrFormat, v)
	}
	rec := &ReadRecord{Version: v}
	for {
		l, err := line()
		if err != nil {
			return nil, err
		}
		if l == "" {
			break
		}
		if l[0] == ' ' || l[0] == '\t' {
			if len(rec.Fields) == 0 {
				return nil, fmt.Errorf("%w: continuation line %q before any field", ErrFormat, l)
			}
			rec.Fields[len(rec.Fields)-1].Value += " " + strings.TrimSpace(l)
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("%w: header line %q has no colon", ErrFormat, l)
		}
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		rec.Fields = append(rec.Fields, Field{name, strings.TrimSpace(value)})
	}
	cl := rec.Fields.Get("Content-Length")
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: Content-Length %q", ErrFormat, cl)
	}
	if n > r.MaxBlock {
		return nil, fmt.Errorf("%w: Content-Length %d is above the limit %d", ErrFormat, n, r.MaxBlock)
	}
	var block bytes.Buffer
	if _, err := io.CopyN(&block, br, n); err != nil {
		return nil, fmt.Errorf("%w: block of %d bytes: %v", ErrFormat, n, err)
	}
	rec.Block = block.Bytes()
	var end [4]byte
	if _, err := io.ReadFull(br, end[:]); err != nil || string(end[:]) != "\r\n\r\n" {
		return nil, fmt.Errorf("%w: the block is not followed by CRLF CRLF (wrong Content-Length?)", ErrFormat)
	}
	return rec, nil
}

// Verify checks the record's WARC-Block-Digest and, for HTTP blocks, WARC-Payload-Digest (sha1 digests only).
// A record without digests passes.
func (r *ReadRecord) Verify() error {
	check := func(field string, data []byte) error {
		want := r.Fields.Get(field)
		if want == "" {
			return nil
		}
		algo, _, _ := strings.Cut(want, ":")
		if !strings.EqualFold(algo, "sha1") {
			return fmt.Errorf("warc: %s %q: only sha1 is supported", field, want)
		}
		sum := sha1.Sum(data)
		if got := "sha1:" + b32.EncodeToString(sum[:]); !strings.EqualFold(got, want) {
			return fmt.Errorf("warc: record %s: %s is %s, the data hashes to %s", r.ID(), field, want, got)
		}
		return nil
	}
	if err := check("WARC-Block-Digest", r.Block); err != nil {
		return err
	}
	if r.Fields.Get("WARC-Payload-Digest") != "" {
		p, ok := httpPayload(r.Block)
		if !ok {
			return fmt.Errorf("warc: record %s has a payload digest but no HTTP header in its block", r.ID())
		}
		return check("WARC-Payload-Digest", p)
	}
	return nil
}
