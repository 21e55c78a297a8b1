package warc

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("warc: writer is closed")

// Writer writes WARC/1.1 records to size-rotated files, one gzip member per record. It is safe for concurrent
// use: records are digested and compressed in the calling goroutine, then appended under a lock, so several
// fetchers can write at once and use several cores. The records of one call (Write or WriteExchange) are
// contiguous and in the same file. The caller owns the Writer and must Close it; an I/O error is sticky (every
// later call returns it) because the file may end in a partial record.
type Writer struct {
	cfg  Config
	log  *slog.Logger
	now  func() time.Time
	host string // Hostname made safe for file names

	gz sync.Pool // *gzip.Writer

	records, written, raw, recovered atomic.Int64

	mu struct {
		sync.Mutex
		f      *os.File
		bw     *bufio.Writer
		name   string // final path of the open file (it is written as name+".open")
		size   int64
		serial int
		files  []string
		closed bool
		err    error
	}
}

// OpenSuffix ends the name of the file being written; Close and rotation rename it away.
const OpenSuffix = ".open"

// New checks cfg, creates cfg.Dir, recovers the files a killed Writer of the same prefix and host name left
// open there (RecoverFile), and returns a Writer. The first file is opened by the first write. log may be nil.
func New(cfg Config, log *slog.Logger) (*Writer, error) {
	if cfg.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("warc: host name: %w", err)
		}
		cfg.Hostname = h
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: create dir: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Writer{cfg: cfg, log: log, now: time.Now, host: safeHost(cfg.Hostname)}
	// Files a killed writer of this prefix and host name left open are finished first (see RecoverFile).
	if err := w.recoverDir(); err != nil {
		return nil, err
	}
	return w, nil
}

func safeHost(h string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, h)
}

// Position is where a record starts: the file's final path and the offset of its gzip member, what a CDX index
// records.
type Position struct {
	File   string
	Offset int64
}

// member is one record compressed into its own gzip member.
type member struct {
	buf *bytes.Buffer
	raw int64
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// compress serialises one record (header, then the block parts) into a gzip member.
func (w *Writer) compress(head []byte, parts ...[]byte) member {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	zw, _ := w.gz.Get().(*gzip.Writer)
	if zw == nil {
		zw, _ = gzip.NewWriterLevel(buf, w.cfg.CompressionLevel) // the level was validated
	} else {
		zw.Reset(buf)
	}
	raw := int64(len(head))
	zw.Write(head)
	for _, p := range parts {
		zw.Write(p)
		raw += int64(len(p))
	}
	zw.Write(crlf2)
	zw.Close()
	w.gz.Put(zw)
	return member{buf: buf, raw: raw + 4}
}

var crlf2 = []byte("\r\n\r\n")

// prepare fills the id and date of r and returns its header, which ends with the empty line.
func (w *Writer) prepare(r *Record, block [][]byte, payload []byte, hasPayload bool) ([]byte, error) {
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.Date.IsZero() {
		r.Date = w.now()
	}
	// appendRecord needs the block in one piece only for its digests and length: give it an empty block and
	// patch in what the parts say.
	var n int
	h := sha1.New()
	for _, p := range block {
		h.Write(p)
		n += len(p)
	}
	blockDigest := "sha1:" + b32.EncodeToString(h.Sum(nil))
	var payloadDigest string
	if hasPayload {
		payloadDigest = Digest(payload)
	}
	return recordHeader(nil, r, blockDigest, payloadDigest, n)
}

// Write appends the records, in order and contiguously in one file, and returns the position of the first.
// The Writer fills each record's ID and Date when they are empty (so the caller can read them back).
func (w *Writer) Write(recs ...*Record) (Position, error) {
	if len(recs) == 0 {
		return Position{}, nil
	}
	members := make([]member, 0, len(recs))
	defer func() {
		for _, m := range members {
			bufPool.Put(m.buf)
		}
	}()
	for _, r := range recs {
		var payload []byte
		var hasPayload bool
		if r.Type == TypeResponse && strings.HasPrefix(r.ContentType, "application/http") {
			payload, hasPayload = httpPayload(r.Block)
		}
		head, err := w.prepare(r, [][]byte{r.Block}, payload, hasPayload)
		if err != nil {
			return Position{}, err
		}
		members = append(members, w.compress(head, r.Block))
	}
	return w.append(members)
}

// append writes compressed members to the current file, rotating or opening a file first if needed.
func (w *Writer) append(members []member) (Position, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return Position{}, ErrClosed
	}
	if w.mu.err != nil {
		return Position{}, w.mu.err
	}
	if w.mu.f != nil && w.mu.size >= w.cfg.MaxFileSize {
		if err := w.finishLocked(); err != nil {
			return Position{}, w.fail(err)
		}
	}
	if w.mu.f == nil {
		if err := w.openLocked(); err != nil {
			return Position{}, w.fail(err)
		}
	}
	pos := Position{File: w.mu.name, Offset: w.mu.size}
	for _, m := range members {
		n, err := w.mu.bw.Write(m.buf.Bytes())
		w.mu.size += int64(n)
		if err != nil {
			return Position{}, w.fail(fmt.Errorf("warc: write %s: %w", w.mu.name+OpenSuffix, err))
		}
		w.records.Add(1)
		w.written.Add(int64(n))
		w.raw.Add(m.raw)
	}
	return pos, nil
}

func (w *Writer) fail(err error) error {
	w.mu.err = err
	return err
}

// openLocked creates the next file, named Prefix-Timestamp-Serial-Hostname.warc.gz and written as
// name+".open", and writes its warcinfo record.
func (w *Writer) openLocked() error {
	now := w.now().UTC()
	stamp := strings.Replace(now.Format("20060102150405.000"), ".", "", 1)
	for tries := 0; ; tries++ {
		base := fmt.Sprintf("%s-%s-%05d-%s.warc.gz", w.cfg.Prefix, stamp, w.mu.serial, w.host)
		w.mu.serial++
		name := filepath.Join(w.cfg.Dir, base)
		if _, err := os.Lstat(name); err == nil {
			continue
		}
		f, err := os.OpenFile(name+OpenSuffix, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && tries < 1000 {
			continue
		}
		if err != nil {
			return fmt.Errorf("warc: create file: %w", err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return err
		}
		w.mu.f, w.mu.name, w.mu.size = f, name, 0
		w.mu.bw = bufio.NewWriterSize(f, 256<<10)
		break
	}
	info := w.warcinfo(filepath.Base(w.mu.name), now)
	head, err := w.prepare(info, [][]byte{info.Block}, nil, false)
	if err != nil {
		return err
	}
	m := w.compress(head, info.Block)
	defer bufPool.Put(m.buf)
	n, err := w.mu.bw.Write(m.buf.Bytes())
	w.mu.size += int64(n)
	if err != nil {
		return fmt.Errorf("warc: write %s: %w", w.mu.name+OpenSuffix, err)
	}
	w.records.Add(1)
	w.written.Add(int64(n))
	w.raw.Add(m.raw)
	w.log.Debug("warc file opened", "file", w.mu.name+OpenSuffix)
	return nil
}

func (w *Writer) warcinfo(filename string, now time.Time) *Record {
	fields := Fields{{"software", w.cfg.Software}, {"format", "WARC File Format 1.1"},
		{"conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		{"hostname", w.cfg.Hostname}}
	for _, f := range []Field{{"operator", w.cfg.Operator}, {"isPartOf", w.cfg.IsPartOf},
		{"description", w.cfg.Description}, {"robots", w.cfg.Robots}, {"http-header-user-agent", w.cfg.UserAgent}} {
		if f.Value != "" {
			fields = append(fields, f)
		}
	}
	block, _ := FieldsBlock(fields) // values were validated with the config
	return &Record{Type: TypeWarcinfo, Date: now, ContentType: ContentTypeFields,
		Fields: Fields{{"WARC-Filename", filename}}, Block: block}
}

// finishLocked flushes, syncs and closes the open file and renames it to its final name.
func (w *Writer) finishLocked() error {
	f, bw, name := w.mu.f, w.mu.bw, w.mu.name
	w.mu.f, w.mu.bw = nil, nil
	err := errors.Join(flushFile(f, bw, name), f.Close())
	if err == nil {
		if err = os.Rename(name+OpenSuffix, name); err != nil {
			err = fmt.Errorf("warc: rename %s: %w", name+OpenSuffix, err)
		}
	}
	if err != nil {
		return err
	}
	w.mu.files = append(w.mu.files, name)
	w.log.Debug("warc file closed", "file", name, "bytes", w.mu.size)
	return nil
}

func flushFile(f *os.File, bw *bufio.Writer, name string) error {
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("warc: flush %s: %w", name+OpenSuffix, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", name+OpenSuffix, err)
	}
	return nil
}

// Flush writes buffered records to the open file and syncs it to stable storage, so that what was written
// survives a crash (call it before committing the offsets of what the records describe).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.err != nil {
		return w.mu.err
	}
	if w.mu.f == nil {
		return nil
	}
	if err := flushFile(w.mu.f, w.mu.bw, w.mu.name); err != nil {
		return w.fail(err)
	}
	return nil
}

// Rotate finishes the open file (if any); the next write opens a new one.
func (w *Writer) Rotate() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return ErrClosed
	}
	if w.mu.err != nil || w.mu.f == nil {
		return w.mu.err
	}
	if err := w.finishLocked(); err != nil {
		return w.fail(err)
	}
	return nil
}

// Close finishes the open file: flushes, syncs, closes and renames it. Later calls return ErrClosed; Close
// itself is idempotent. After a sticky I/O error, Close closes the file, leaves it with its ".open" name, and
// returns the error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return nil
	}
	w.mu.closed = true
	if w.mu.f == nil {
		return w.mu.err
	}
	if w.mu.err != nil {
		w.mu.f.Close()
		w.mu.f = nil
		return w.mu.err
	}
	return w.finishLocked()
}

// Files returns the paths of the finished files, in the order they were finished.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.mu.files...)
}

// Stats are the Writer's counters since New.
type Stats struct {
	Records           int64 // records written, warcinfo included
	Bytes             int64 // compressed bytes written
	UncompressedBytes int64 // bytes of the records before compression
	Recovered         int64 // files a killed writer left open that New finished
}

// Stats returns the counters.
func (w *Writer) Stats() Stats {
	return Stats{Records: w.records.Load(), Bytes: w.written.Load(), UncompressedBytes: w.raw.Load(), Recovered: w.recovered.Load()}
}

var _ io.Closer = (*Writer)(nil)
