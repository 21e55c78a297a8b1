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
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/frontiercrawl/frontier"
)

// Bloom is a Bloom filter over fingerprints: Test answers false only for a fingerprint never added ("certainly
// new"); true means "maybe seen" and must be checked against the exact store. It is designed for an expected
// number of URLs and a target false-positive rate, and can be saved to and loaded from a byte stream.
//
// It grows with the crawl (a scalable Bloom filter, Almeida et al. 2007): it starts with one layer for at most
// firstLayerCap fingerprints and, whenever the newest layer holds its capacity, adds a layer of twice the
// capacity at half the false-positive rate. Layer i (from 0) has rate FPRate/2^(i+1), so the rate of the whole
// stays under FPRate at any count, and a small crawl pays for the URLs it has seen, not for Expected. A
// fingerprint is added to the newest layer unless an older one already answers "maybe".
// A process with a memory budget caps the layers (SetMaxBytes): past the cap the newest layer takes the rest
// and the rate rises, which costs reads of the exact store, never an answer.
//
// It is our own rather than bits-and-blooms/bloom/v3 because it is shared by concurrent strategy-worker
// goroutines without a lock (bits are set with atomic OR; only adding a layer takes a mutex), hashes a
// fingerprint once (xxhash64, then Kirsch–Mitzenmacher double hashing with a multiply-shift range reduction, no
// modulo), and has a checksummed file format with its design parameters, so a restart can tell a stale or
// foreign file from its own.
//
// Safe for concurrent use. A Test racing with an Add of the same fingerprint may answer either way.
type Bloom struct {
	layers atomic.Pointer[[]*bloomLayer]
	grow   sync.Mutex
	design uint64 // expected fingerprints
	fpRate float64
	n      atomic.Uint64 // Adds that set at least one new bit: about the distinct fingerprints added
	warned atomic.Bool
	// maxBits caps the layers' bits together (SetMaxBytes; 0: no cap) and full says the cap stopped a layer.
	maxBits atomic.Uint64
	full    atomic.Bool
	log     *slog.Logger
}

// firstLayerCap is the most fingerprints the first layer is sized for (about 1.2 MB at a 1% design rate).
const firstLayerCap = 1 << 20

type bloomLayer struct {
	words []atomic.Uint64
	m     uint64 // bits
	k     uint32 // hash functions
	cap   uint64 // fingerprints it is sized for (the design of its file record)
	rate  float64
	n     atomic.Uint64
}

// BloomConfig sizes a Bloom filter.
type BloomConfig struct {
	// Expected is the number of distinct URLs the filter is designed for (it warns past it, and keeps growing);
	// 0 disables the filter.
	Expected uint64 `mapstructure:"expected"`
	// FPRate is the false-positive rate bound, in (0, 0.5].
	FPRate float64 `mapstructure:"fp_rate"`
}

// DefaultBloomConfig is 100 million URLs at 1% (about 114 MiB for one layer; the filter grows to its size
// with use).
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

// NewBloom returns an empty filter for cfg.Expected fingerprints at cfg.FPRate: its first layer holds
// min(Expected, firstLayerCap) fingerprints at FPRate/2, m = −n·ln p / ln²2 bits (rounded up to whole 64-bit
// words) and k = round(m/n · ln 2) hash functions. log receives the warning when the filter passes its design
// size; nil discards it.
func NewBloom(cfg BloomConfig, log *slog.Logger) (*Bloom, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Expected == 0 {
		return nil, errors.New("state: bloom expected = 0")
	}
	b := emptyBloom(cfg.Expected, cfg.FPRate, log)
	b.layers.Store(&[]*bloomLayer{sizedLayer(min(cfg.Expected, firstLayerCap), cfg.FPRate/2)})
	return b, nil
}

func emptyBloom(design uint64, fpRate float64, log *slog.Logger) *Bloom {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bloom{design: design, fpRate: fpRate, log: log}
}

func sizedLayer(n uint64, p float64) *bloomLayer {
	m, k := layerSize(n, p)
	return newLayer(m, k, n, p)
}

// layerSize returns the bits (a multiple of 64) and hash functions of a layer for n fingerprints at rate p.
func layerSize(n uint64, p float64) (m uint64, k uint32) {
	fn := float64(n)
	m = uint64(math.Ceil(-fn * math.Log(p) / (math.Ln2 * math.Ln2)))
	m = (m + 63) &^ 63
	return m, max(uint32(math.Round(float64(m)/fn*math.Ln2)), 1)
}

func newLayer(m uint64, k uint32, capacity uint64, rate float64) *bloomLayer {
	return &bloomLayer{words: make([]atomic.Uint64, m/64), m: m, k: k, cap: capacity, rate: rate}
}

func bloomHashes(fp []byte) (uint64, uint64) {
	h1 := xxhash.Sum64(fp)
	// splitmix64 finaliser of h1: a second, well-mixed hash; odd so the probe sequence never stalls.
	z := h1 + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return h1, (z ^ (z >> 31)) | 1
}

func (l *bloomLayer) add(h1, h2 uint64) bool {
	fresh := false
	for i := range uint64(l.k) {
		bit, _ := bits.Mul64(h1+i*h2, l.m)
		w, mask := &l.words[bit>>6], uint64(1)<<(bit&63)
		if w.Load()&mask == 0 {
			w.Or(mask)
			fresh = true
		}
	}
	return fresh
}

func (l *bloomLayer) test(h1, h2 uint64) bool {
	for i := range uint64(l.k) {
		bit, _ := bits.Mul64(h1+i*h2, l.m)
		if l.words[bit>>6].Load()&(uint64(1)<<(bit&63)) == 0 {
			return false
		}
	}
	return true
}

// Add inserts fp.
func (b *Bloom) Add(fp frontier.Fingerprint) {
	h1, h2 := bloomHashes(fp)
	ls := *b.layers.Load()
	for _, l := range ls[:len(ls)-1] {
		if l.test(h1, h2) {
			return
		}
	}
	last := ls[len(ls)-1]
	if !last.add(h1, h2) {
		return
	}
	if last.n.Add(1) >= last.cap && !b.full.Load() {
		b.addLayer(len(ls))
	}
	if b.n.Add(1) == b.design+1 && b.warned.CompareAndSwap(false, true) {
		b.log.Warn("state: bloom filter past its design size; it keeps growing a layer at a time",
			"design", b.design, "fp_rate", b.fpRate, "bits", b.Bits())
	}
}

// addLayer appends a layer of twice the newest one's capacity at half its rate, unless one was added since the
// filter had have layers or the layer would take the filter past its cap (SetMaxBytes).
func (b *Bloom) addLayer(have int) {
	b.grow.Lock()
	defer b.grow.Unlock()
	ls := *b.layers.Load()
	if len(ls) != have {
		return
	}
	last := ls[len(ls)-1]
	m, k := layerSize(2*last.cap, last.rate/2)
	if limit := b.maxBits.Load(); limit > 0 && b.Bits()+m > limit {
		if !b.full.Swap(true) {
			b.log.Warn("state: bloom filter at its memory cap, no layer added; from here its false-positive rate rises: more reads of the store, never a wrong answer",
				"max_bytes", limit/8, "bytes", b.Bits()/8, "count", b.n.Load(), "layers", len(ls))
		}
		return
	}
	next := append(append(make([]*bloomLayer, 0, len(ls)+1), ls...), newLayer(m, k, 2*last.cap, last.rate/2))
	b.layers.Store(&next)
}

// SetMaxBytes caps the filter's memory, all layers: once the next layer would take it past n bytes, no layer
// is added and the newest one takes every later fingerprint, its false-positive rate rising with them (a
// "maybe" more often, so more reads of the exact store; never a "certainly new" for a fingerprint added). A
// filter already past n keeps its layers. 0 removes the cap. The cap is not part of the design (Config) nor
// of the file: a process sets it from its own memory plan.
func (b *Bloom) SetMaxBytes(n int64) {
	b.grow.Lock()
	defer b.grow.Unlock()
	b.maxBits.Store(uint64(max(n, 0)) * 8)
	b.full.Store(false) // a larger cap lets the next Add past the newest layer's capacity grow it again
}

// MaxBytes returns the cap SetMaxBytes set (0: none).
func (b *Bloom) MaxBytes() int64 { return int64(b.maxBits.Load() / 8) }

// Full reports whether the cap (SetMaxBytes) has stopped a layer.
func (b *Bloom) Full() bool { return b.full.Load() }

// Test reports whether fp may have been added (true) or certainly was not (false).
func (b *Bloom) Test(fp frontier.Fingerprint) bool {
	h1, h2 := bloomHashes(fp)
	for _, l := range *b.layers.Load() {
		if l.test(h1, h2) {
			return true
		}
	}
	return false
}

// Count returns about how many distinct fingerprints were added (Adds that set a new bit).
func (b *Bloom) Count() uint64 { return b.n.Load() }

// Bits returns the size of the filter in bits, all layers; Bytes in memory is Bits/8.
func (b *Bloom) Bits() uint64 {
	var m uint64
	for _, l := range *b.layers.Load() {
		m += l.m
	}
	return m
}

// Layers returns the number of layers.
func (b *Bloom) Layers() int { return len(*b.layers.Load()) }

// HashFuncs returns k of the newest layer, the number of bits set per fingerprint added now.
func (b *Bloom) HashFuncs() uint32 { ls := *b.layers.Load(); return ls[len(ls)-1].k }

// Config returns the design the filter was built for.
func (b *Bloom) Config() BloomConfig { return BloomConfig{Expected: b.design, FPRate: b.fpRate} }

// ExpectedFPRate returns the theoretical false-positive rate after n distinct insertions into this filter's
// layers, filled in order to their capacities: 1 − Π(1 − (1 − e^(−k·nᵢ/m))^k).
func (b *Bloom) ExpectedFPRate(n uint64) float64 {
	ls := *b.layers.Load()
	pass := 1.0
	for i, l := range ls {
		ni := n
		if i < len(ls)-1 {
			ni = min(n, l.cap)
		}
		n -= ni
		pass *= 1 - math.Pow(1-math.Exp(-float64(l.k)*float64(ni)/float64(l.m)), float64(l.k))
	}
	return 1 - pass
}

const bloomMagic = "FRBLOOM1"

// The file is one record per layer, oldest first. A record: magic, m, k, design, fpRate bits, n; then m/64
// little-endian words; then CRC-32C of the record before it. The first record's design and fpRate are the
// filter's (its n the whole filter's count); a later record's are its layer's capacity and rate (its n the
// layer's count). A one-layer file is the format of the filter before it grew layers.
const bloomHeaderLen = 8 + 8 + 4 + 8 + 8 + 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the filter in its file format. Concurrent Adds during WriteTo may or may not be included.
func (b *Bloom) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	var total int64
	for i, l := range *b.layers.Load() {
		design, rate, n := l.cap, l.rate, l.n.Load()
		if i == 0 {
			design, rate, n = b.design, b.fpRate, b.n.Load()
		}
		crc := crc32.New(castagnoli)
		out := io.MultiWriter(bw, crc)
		hdr := make([]byte, 0, bloomHeaderLen)
		hdr = append(hdr, bloomMagic...)
		hdr = binary.LittleEndian.AppendUint64(hdr, l.m)
		hdr = binary.LittleEndian.AppendUint32(hdr, l.k)
		hdr = binary.LittleEndian.AppendUint64(hdr, design)
		hdr = binary.LittleEndian.AppendUint64(hdr, math.Float64bits(rate))
		hdr = binary.LittleEndian.AppendUint64(hdr, n)
		if _, err := out.Write(hdr); err != nil {
			return 0, fmt.Errorf("state: write bloom: %w", err)
		}
		buf := make([]byte, 0, 1<<15)
		for i := range l.words {
			buf = binary.LittleEndian.AppendUint64(buf, l.words[i].Load())
			if len(buf) == cap(buf) || i == len(l.words)-1 {
				if _, err := out.Write(buf); err != nil {
					return 0, fmt.Errorf("state: write bloom: %w", err)
				}
				buf = buf[:0]
			}
		}
		if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
			return 0, fmt.Errorf("state: write bloom: %w", err)
		}
		total += int64(bloomHeaderLen + 8*len(l.words) + 4)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("state: write bloom: %w", err)
	}
	return total, nil
}

// ReadBloom reads a filter written by WriteTo from a stream of size bytes (-1 if unknown). A truncated,
// corrupt or foreign stream is an error naming the problem. With the size known, a header that does not
// fit in it is rejected before anything is allocated; without it, the bits are read in slabs and copied at
// the end (twice the filter's memory at the peak), so a lying header cannot make it allocate more than the
// stream holds.
func ReadBloom(r io.Reader, size int64, log *slog.Logger) (*Bloom, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var b *Bloom
	var ls []*bloomLayer
	left := size
	for i := 0; ; i++ {
		if i > 0 {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
		}
		l, design, rate, n, used, err := readLayer(br, left, i)
		if err != nil {
			return nil, err
		}
		if size >= 0 {
			left -= used
		}
		if i == 0 {
			b = emptyBloom(design, rate, log)
			b.n.Store(n)
		} else {
			l.cap, l.rate = design, rate
			l.n.Store(n)
		}
		ls = append(ls, l)
		if i >= 64 {
			return nil, fmt.Errorf("state: read bloom: more than 64 layers")
		}
	}
	if size >= 0 && left != 0 {
		return nil, fmt.Errorf("state: read bloom: stream of %d bytes, its records take %d (corrupt)", size, size-left)
	}
	// The first layer's rate and capacity are not in its record: the rate is NewBloom's, the capacity what its
	// bits hold at that rate (a file from before the layers holds more); its count is the whole filter's less
	// the later layers'.
	first := ls[0]
	first.rate = b.fpRate / 2
	if !(first.rate > 0 && first.rate < 1) {
		return nil, fmt.Errorf("state: read bloom: fp_rate %v out of range", b.fpRate)
	}
	first.cap = max(uint64(float64(first.m)*math.Ln2*math.Ln2/-math.Log(first.rate)), 1)
	rest := uint64(0)
	for _, l := range ls[1:] {
		rest += l.n.Load()
	}
	first.n.Store(b.n.Load() - min(rest, b.n.Load()))
	b.layers.Store(&ls)
	return b, nil
}

// readLayer reads one record of at most left bytes (-1 if unknown) and returns its layer, its design, rate and
// count fields, and its length.
func readLayer(br *bufio.Reader, left int64, idx int) (*bloomLayer, uint64, float64, uint64, int64, error) {
	crc := crc32.New(castagnoli)
	in := io.TeeReader(br, crc)
	hdr := make([]byte, bloomHeaderLen)
	if _, err := io.ReadFull(in, hdr); err != nil {
		return nil, 0, 0, 0, 0, fmt.Errorf("state: read bloom header (layer %d): %w", idx, err)
	}
	if string(hdr[:8]) != bloomMagic {
		return nil, 0, 0, 0, 0, fmt.Errorf("state: read bloom: magic %q, want %q (layer %d)", hdr[:8], bloomMagic, idx)
	}
	m := binary.LittleEndian.Uint64(hdr[8:])
	k := binary.LittleEndian.Uint32(hdr[16:])
	design := binary.LittleEndian.Uint64(hdr[20:])
	rate := math.Float64frombits(binary.LittleEndian.Uint64(hdr[28:]))
	n := binary.LittleEndian.Uint64(hdr[36:])
	if m == 0 || m%64 != 0 || m > 1<<46 || k == 0 || k > 64 {
		return nil, 0, 0, 0, 0, fmt.Errorf("state: read bloom: bad geometry m=%d k=%d (layer %d)", m, k, idx)
	}
	words := int(m / 64)
	want := int64(bloomHeaderLen + 8*words + 4)
	if left >= 0 && want > left {
		return nil, 0, 0, 0, 0, fmt.Errorf("state: read bloom: %d bytes left, header says %d (truncated or corrupt, layer %d)", left, want, idx)
	}
	const slabWords = 1 << 17
	var slabs [][]uint64
	buf := make([]byte, 8*slabWords)
	for read := 0; read < words; {
		chunk := min(slabWords, words-read)
		if _, err := io.ReadFull(in, buf[:chunk*8]); err != nil {
			return nil, 0, 0, 0, 0, fmt.Errorf("state: read bloom bits (layer %d, word %d of %d): %w", idx, read, words, err)
		}
		slab := make([]uint64, chunk)
		for j := range slab {
			slab[j] = binary.LittleEndian.Uint64(buf[j*8:])
		}
		slabs = append(slabs, slab)
		read += chunk
	}
	sumWant := crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return nil, 0, 0, 0, 0, fmt.Errorf("state: read bloom checksum (layer %d): %w", idx, err)
	}
	if got := binary.LittleEndian.Uint32(sum[:]); got != sumWant {
		return nil, 0, 0, 0, 0, fmt.Errorf("state: read bloom: checksum %08x, want %08x (corrupt file, layer %d)", got, sumWant, idx)
	}
	l := newLayer(m, k, 0, 0)
	i := 0
	for si, slab := range slabs {
		for _, w := range slab {
			l.words[i].Store(w)
			i++
		}
		slabs[si] = nil
	}
	return l, design, rate, n, want, nil
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
