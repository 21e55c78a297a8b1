package state

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/frontiercrawl/frontier"
)

// Bloom is a Bloom filter over fingerprints: Test answers false only for a fingerprint never added ("certainly
// new"); true means "maybe seen" and must be checked against the exact store. It is sized from the expected
// number of URLs and a target false-positive rate, and can be saved to and loaded from a byte stream.
//
// It is our own rather than bits-and-blooms/bloom/v3 because it is shared by concurrent strategy-worker
// goroutines without a lock (bits are set with atomic OR), hashes a fingerprint once (xxhash64, then
// Kirsch–Mitzenmacher double hashing with a multiply-shift range reduction, no modulo), and has a checksummed
// file format with its design parameters, so a restart can tell a stale or foreign file from its own.
//
// Safe for concurrent use. A Test racing with an Add of the same fingerprint may answer either way.
type Bloom struct {
	words  []atomic.Uint64
	m      uint64 // bits
	k      uint32 // hash functions
	design uint64 // expected fingerprints
	fpRate float64
	n      atomic.Uint64 // Adds that set at least one new bit: about the distinct fingerprints added
	warned atomic.Bool
	log    *slog.Logger
}

// BloomConfig sizes a Bloom filter.
type BloomConfig struct {
	// Expected is the number of distinct URLs the filter is designed for; 0 disables the filter.
	Expected uint64 `mapstructure:"expected"`
	// FPRate is the false-positive rate at Expected URLs, in (0, 0.5].
	FPRate float64 `mapstructure:"fp_rate"`
}

// DefaultBloomConfig is 100 million URLs at 1% (about 114 MiB).
func DefaultBloomConfig() BloomConfig { return BloomConfig{Expected: 100_000_000, FPRate: 0.01} }

// Validate reports every problem of the configuration.
func (c BloomConfig) Validate() error {
	var errs []error
	if c.Expected > 1<<40 {
		errs = append(errs, fmt.Errorf("state: bloom expected = %d, want at most 2^40", c.Expected))
	}
	if c.Expected > 0 && !(c.FPRate > 0 && c.FPRate <= 0.5) {
		errs = append(errs, fmt.Errorf("state: bloom fp_rate = %v, want in (0, 0.5]", c.FPRate))
	}
	return errors.Join(errs...)
}

// NewBloom returns an empty filter for cfg.Expected fingerprints at cfg.FPRate: m = −n·ln p / ln²2 bits
// (rounded up to whole 64-bit words) and k = round(m/n · ln 2) hash functions. log receives the warning when
// the filter passes its design size; nil discards it.
func NewBloom(cfg BloomConfig, log *slog.Logger) (*Bloom, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Expected == 0 {
		return nil, errors.New("state: bloom expected = 0")
	}
	n := float64(cfg.Expected)
	m := uint64(math.Ceil(-n * math.Log(cfg.FPRate) / (math.Ln2 * math.Ln2)))
	m = (m + 63) &^ 63
	k := uint32(math.Round(float64(m) / n * math.Ln2))
	k = max(k, 1)
	return newBloom(m, k, cfg.Expected, cfg.FPRate, log), nil
}

func newBloom(m uint64, k uint32, design uint64, fpRate float64, log *slog.Logger) *Bloom {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bloom{words: make([]atomic.Uint64, m/64), m: m, k: k, design: design, fpRate: fpRate, log: log}
}

func bloomHashes(fp []byte) (uint64, uint64) {
	h1 := xxhash.Sum64(fp)
	// splitmix64 finaliser of h1: a second, well-mixed hash; odd so the probe sequence never stalls.
	z := h1 + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return h1, (z ^ (z >> 31)) | 1
}

// Add inserts fp.
func (b *Bloom) Add(fp frontier.Fingerprint) {
	h1, h2 := bloomHashes(fp)
	fresh := false
	for i := range uint64(b.k) {
		bit, _ := bits.Mul64(h1+i*h2, b.m)
		w, mask := &b.words[bit>>6], uint64(1)<<(bit&63)
		if w.Load()&mask == 0 {
			w.Or(mask)
			fresh = true
		}
	}
	if fresh && b.n.Add(1) == b.design+1 && b.warned.CompareAndSwap(false, true) {
		b.log.Warn("state: bloom filter past its design size; false positives (extra store reads) will grow",
			"design", b.design, "fp_rate_at_design", b.fpRate, "bits", b.m)
	}
}

// Test reports whether fp may have been added (true) or certainly was not (false).
func (b *Bloom) Test(fp frontier.Fingerprint) bool {
	h1, h2 := bloomHashes(fp)
	for i := range uint64(b.k) {
		bit, _ := bits.Mul64(h1+i*h2, b.m)
		if b.words[bit>>6].Load()&(uint64(1)<<(bit&63)) == 0 {
			return false
		}
	}
	return true
}

// Count returns about how many distinct fingerprints were added (Adds that set a new bit).
func (b *Bloom) Count() uint64 { return b.n.Load() }

// Bits returns the size of the filter in bits; Bytes in memory is Bits/8.
func (b *Bloom) Bits() uint64 { return b.m }

// HashFuncs returns k, the number of bits set per fingerprint.
func (b *Bloom) HashFuncs() uint32 { return b.k }

// Config returns the design the filter was built for.
func (b *Bloom) Config() BloomConfig { return BloomConfig{Expected: b.design, FPRate: b.fpRate} }

// ExpectedFPRate returns the theoretical false-positive rate after n distinct insertions: (1 − e^(−kn/m))^k.
func (b *Bloom) ExpectedFPRate(n uint64) float64 {
	return math.Pow(1-math.Exp(-float64(b.k)*float64(n)/float64(b.m)), float64(b.k))
}

const bloomMagic = "FRBLOOM1"

// header: magic, m, k, design, fpRate bits, n; then m/64 little-endian words; then CRC-32C of all before.
const bloomHeaderLen = 8 + 8 + 4 + 8 + 8 + 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the filter in its file format. Concurrent Adds during WriteTo may or may not be included.
func (b *Bloom) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	crc := crc32.New(castagnoli)
	out := io.MultiWriter(bw, crc)
	hdr := make([]byte, 0, bloomHeaderLen)
	hdr = append(hdr, bloomMagic...)
	hdr = binary.LittleEndian.AppendUint64(hdr, b.m)
	hdr = binary.LittleEndian.AppendUint32(hdr, b.k)
	hdr = binary.LittleEndian.AppendUint64(hdr, b.design)
	hdr = binary.LittleEndian.AppendUint64(hdr, math.Float64bits(b.fpRate))
	hdr = binary.LittleEndian.AppendUint64(hdr, b.n.Load())
	if _, err := out.Write(hdr); err != nil {
		return 0, fmt.Errorf("state: write bloom: %w", err)
	}
	buf := make([]byte, 0, 1<<15)
	for i := range b.words {
		buf = binary.LittleEndian.AppendUint64(buf, b.words[i].Load())
		if len(buf) == cap(buf) || i == len(b.words)-1 {
			if _, err := out.Write(buf); err != nil {
				return 0, fmt.Errorf("state: write bloom: %w", err)
			}
			buf = buf[:0]
		}
	}
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return 0, fmt.Errorf("state: write bloom: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("state: write bloom: %w", err)
	}
	return int64(bloomHeaderLen + 8*len(b.words) + 4), nil
}

// ReadBloom reads a filter written by WriteTo from a stream of size bytes (-1 if unknown). A truncated,
// corrupt or foreign stream is an error naming the problem. With the size known, a header that does not
// match it is rejected before anything is allocated; without it, the bits are read in slabs and copied at
// the end (twice the filter's memory at the peak), so a lying header cannot make it allocate more than the
// stream holds.
func ReadBloom(r io.Reader, size int64, log *slog.Logger) (*Bloom, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	crc := crc32.New(castagnoli)
	in := io.TeeReader(br, crc)
	hdr := make([]byte, bloomHeaderLen)
	if _, err := io.ReadFull(in, hdr); err != nil {
		return nil, fmt.Errorf("state: read bloom header: %w", err)
	}
	if string(hdr[:8]) != bloomMagic {
		return nil, fmt.Errorf("state: read bloom: magic %q, want %q", hdr[:8], bloomMagic)
	}
	m := binary.LittleEndian.Uint64(hdr[8:])
	k := binary.LittleEndian.Uint32(hdr[16:])
	design := binary.LittleEndian.Uint64(hdr[20:])
	fpRate := math.Float64frombits(binary.LittleEndian.Uint64(hdr[28:]))
	n := binary.LittleEndian.Uint64(hdr[36:])
	if m == 0 || m%64 != 0 || m > 1<<46 || k == 0 || k > 64 {
		return nil, fmt.Errorf("state: read bloom: bad geometry m=%d k=%d", m, k)
	}
	words := int(m / 64)
	if want := int64(bloomHeaderLen + 8*words + 4); size >= 0 && size != want {
		return nil, fmt.Errorf("state: read bloom: stream of %d bytes, header says %d (truncated or corrupt)", size, want)
	}
	const slabWords = 1 << 17
	var slabs [][]uint64
	buf := make([]byte, 8*slabWords)
	for read := 0; read < words; {
		chunk := min(slabWords, words-read)
		if _, err := io.ReadFull(in, buf[:chunk*8]); err != nil {
			return nil, fmt.Errorf("state: read bloom bits (word %d of %d): %w", read, words, err)
		}
		slab := make([]uint64, chunk)
		for j := range slab {
			slab[j] = binary.LittleEndian.Uint64(buf[j*8:])
		}
		slabs = append(slabs, slab)
		read += chunk
	}
	want := crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return nil, fmt.Errorf("state: read bloom checksum: %w", err)
	}
	if got := binary.LittleEndian.Uint32(sum[:]); got != want {
		return nil, fmt.Errorf("state: read bloom: checksum %08x, want %08x (corrupt file)", got, want)
	}
	b := newBloom(m, k, design, fpRate, log)
	b.n.Store(n)
	i := 0
	for si, slab := range slabs {
		for _, w := range slab {
			b.words[i].Store(w)
			i++
		}
		slabs[si] = nil
	}
	return b, nil
}

// BloomStore puts a Bloom filter in front of a Store: Get reads from the store only the fingerprints the filter
// may have seen, and Put adds to the filter before it writes. A false positive costs one store read; it never
// hides a URL, and a URL the filter calls new is new, provided the filter holds every fingerprint of the
// store (build it empty with an empty store, or load the filter saved with the store, or Add every stored
// fingerprint).
//
// Safe for concurrent use if the Store is. Closing the Store is its owner's job.
type BloomStore struct {
	s Store
	b *Bloom
	// Skipped counts fingerprints answered "certainly new" without a store read; Passed counts those read
	// from the store; FalsePositives counts those read but not found.
	Skipped, Passed, FalsePositives atomic.Int64
}

var _ Store = (*BloomStore)(nil)

// NewBloomStore returns s behind b.
func NewBloomStore(s Store, b *Bloom) *BloomStore { return &BloomStore{s: s, b: b} }

// Bloom returns the filter.
func (bs *BloomStore) Bloom() *Bloom { return bs.b }

// Get implements Store.
func (bs *BloomStore) Get(ctx context.Context, fps []frontier.Fingerprint, out []Entry, found []bool) error {
	if err := checkGetArgs(fps, out, found); err != nil {
		return err
	}
	var idx []int
	var maybe []frontier.Fingerprint
	for i, fp := range fps {
		out[i], found[i] = Entry{}, false
		if bs.b.Test(fp) {
			idx = append(idx, i)
			maybe = append(maybe, fp)
		}
	}
	bs.Skipped.Add(int64(len(fps) - len(idx)))
	bs.Passed.Add(int64(len(idx)))
	if len(idx) == 0 {
		return nil
	}
	mo := make([]Entry, len(idx))
	mf := make([]bool, len(idx))
	if err := bs.s.Get(ctx, maybe, mo, mf); err != nil {
		return err
	}
	var fpos int64
	for j, i := range idx {
		out[i], found[i] = mo[j], mf[j]
		if !mf[j] {
			fpos++
		}
	}
	bs.FalsePositives.Add(fpos)
	return nil
}

// Put implements Store.
func (bs *BloomStore) Put(ctx context.Context, fps []frontier.Fingerprint, entries []Entry) error {
	if err := checkPutArgs(fps, entries); err != nil {
		return err
	}
	for _, fp := range fps {
		bs.b.Add(fp)
	}
	return bs.s.Put(ctx, fps, entries)
}
