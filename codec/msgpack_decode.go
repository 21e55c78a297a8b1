package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
	"unsafe"

	frontier "github.com/frontiercrawl/frontier"
)

// DecodeRequest decodes a spider-feed item (a bare request array).
func (m Msgpack) DecodeRequest(p []byte) (*frontier.Request, error) {
	return m.DecodeRequestMeta(p, nil)
}

// DecodeRequestMeta implements RequestMetaDecoder: DecodeRequest, except that the request's meta keeps only the
// entries whose str or bin key keep accepts (and frontier.MetaKeyBody); the others are checked for structure as
// DecodeRequest checks them and skipped without being built, so the same inputs are rejected. A nil keep keeps
// every entry.
func (Msgpack) DecodeRequestMeta(p []byte, keep func(key []byte) bool) (*frontier.Request, error) {
	d := mpReader{b: bytes.Clone(p), keep: keep}
	r, err := d.request()
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, fmt.Errorf("codec: msgpack: request: %w", err)
	}
	return r, nil
}

// DecodeMessage decodes one tagged message. An unknown or str-typed tag wraps ErrUnknownTag.
func (m Msgpack) DecodeMessage(p []byte) (frontier.Message, error) {
	return m.DecodeMessageLinksMeta(p, nil)
}

// DecodeMessageLinksMeta implements LinksMetaDecoder: DecodeMessage, except that the meta maps of a
// links_extracted (its page's request and every link) keep only the entries whose key keep accepts; the others
// are checked for structure and skipped without being built. A nil keep keeps every entry (DecodeMessage).
func (Msgpack) DecodeMessageLinksMeta(p []byte, keep func(key []byte) bool) (frontier.Message, error) {
	return decodeMessage(p, keep, nil)
}

// DecodeMessageSkim implements SkimDecoder.
func (Msgpack) DecodeMessageSkim(p []byte, s Skim) (frontier.Message, error) {
	return decodeMessageSkim(p, s, nil)
}

// NewMessageDecoder implements MessageDecoderMaker: a *MsgpackDecoder.
func (Msgpack) NewMessageDecoder() MessageDecoder { return NewMsgpackDecoder() }

// MsgpackDecoder decodes messages as Msgpack does, for one goroutine, and shares the meta domain maps across the
// messages it decodes: a domain map whose bytes equal one decoded before (by this decoder, among the last
// maxSharedDomains distinct ones) is that map, not a new one. A crawl's spider log names the same few hosts in
// message after message (each page's report repeats its request's domain map, and a strategy worker sees only
// its partition's hosts), and building a domain map costs seven boxed bins and its entries. As within one
// message (sharedDomain), the decoded domain maps are shared values: read them, never write into them
// (Request.SetMetaDomain replaces the map). A shared map holds a copy of its bytes, not the message's.
//
// It also carries the slabs that decoded maps, boxed bins and ints, and the requests of a list (with their
// pointers) are cut from over from one message to the next (slabs, taken by each decode and handed back after):
// a message of the spider log takes a few of each, so one slab of the sizes below serves several messages
// instead of each message allocating its own (issue 21: the strategy worker and the DB worker each decode every
// message). A slab is only ever written past its length, each element once before it is handed out, so a value
// of an earlier message is never overwritten; a value kept after decoding keeps its slab (at most a few KiB)
// alive.
type MsgpackDecoder struct {
	domains map[string]frontier.Value
	slabs   slabs
}

// slabs are the slabs an mpReader cuts values from; a MsgpackDecoder keeps them between messages.
type slabs struct {
	entries []frontier.Entry    // slab the decoded maps are cut from (each capped, so appends reallocate)
	bins    [][]byte            // slab of the boxed bins' headers (boxBin)
	ints    []int64             // slab of the boxed ints (boxInt)
	reqs    []frontier.Request  // slab for the requests of a links or seeds list
	ptrs    []*frontier.Request // slab for the list of a links or seeds list's pointers (shared decoders only)
}

// The sizes of the slabs a MsgpackDecoder's reader allocates (a reader of its own allocates the smaller ones
// of newMap, boxSlabCap and requests): enough for several messages of the spider log each.
const (
	sharedEntrySlab = 128
	sharedBoxSlab   = 64
	sharedReqSlab   = 32
)

// maxSharedDomains bounds a MsgpackDecoder's domain maps (about 200 bytes each): past it, they are dropped and
// collected again from the next messages.
const maxSharedDomains = 4096

// NewMsgpackDecoder returns a decoder with no domain map yet.
func NewMsgpackDecoder() *MsgpackDecoder {
	return &MsgpackDecoder{domains: map[string]frontier.Value{}}
}

// DecodeRequestSkim implements RequestSkimDecoder: Msgpack.DecodeRequestMeta(p, keep), with the request's
// maps cut from the decoder's slabs and, borrow set, without a private copy of p (its bin values then alias p).
func (s *MsgpackDecoder) DecodeRequestSkim(p []byte, keep func(key []byte) bool, borrow bool) (*frontier.Request, error) {
	if !borrow {
		p = bytes.Clone(p)
	}
	d := mpReader{b: p, keep: keep, shared: s, slabs: s.slabs}
	r, err := d.request()
	s.slabs = d.slabs // what this request took stays taken: the next one cuts past it
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, fmt.Errorf("codec: msgpack: request: %w", err)
	}
	return r, nil
}

// DecodeMessage decodes one tagged message as Msgpack.DecodeMessage does.
func (s *MsgpackDecoder) DecodeMessage(p []byte) (frontier.Message, error) {
	return decodeMessage(p, nil, s)
}

// DecodeMessageLinksMeta is Msgpack.DecodeMessageLinksMeta, sharing domain maps as DecodeMessage does.
func (s *MsgpackDecoder) DecodeMessageLinksMeta(p []byte, keep func(key []byte) bool) (frontier.Message, error) {
	return decodeMessage(p, keep, s)
}

// DecodeMessageSkim is Msgpack.DecodeMessageSkim, sharing domain maps as DecodeMessage does.
func (s *MsgpackDecoder) DecodeMessageSkim(p []byte, k Skim) (frontier.Message, error) {
	return decodeMessageSkim(p, k, s)
}

func decodeMessage(p []byte, keep func(key []byte) bool, shared *MsgpackDecoder) (frontier.Message, error) {
	return decodeMessageSkim(p, Skim{LinksMeta: keep}, shared)
}

func decodeMessageSkim(p []byte, s Skim, shared *MsgpackDecoder) (frontier.Message, error) {
	if !s.Borrow {
		p = bytes.Clone(p)
	}
	d := mpReader{b: p, linksKeep: s.LinksMeta, metaKeep: s.Meta, headerKeep: s.Headers, shared: shared}
	if shared != nil {
		d.slabs = shared.slabs
	}
	m, name, err := d.message()
	if shared != nil {
		shared.slabs = d.slabs // what this message took stays taken: the next one cuts past it
	}
	if err == nil {
		err = d.end()
	}
	if err != nil {
		if name == "" {
			return nil, fmt.Errorf("codec: msgpack: %w", err)
		}
		return nil, fmt.Errorf("codec: msgpack: %s: %w", name, err)
	}
	return m, nil
}

// mpReader is a cursor over msgpack bytes. Every read checks the bytes left first. b is a private copy of the
// input, so decoded bin values alias it (capacity capped, so an append by the caller reallocates instead of
// overwriting the next value): one allocation for all the bytes of a message.
type mpReader struct {
	b    []byte
	off  int
	keep func(key []byte) bool // while set, meta entries whose key it rejects are skipped (DecodeMessageLinksMeta)
	// linksKeep is DecodeMessageLinksMeta's keep, in force (as keep) while a links_extracted's page request and
	// links are read.
	linksKeep func(key []byte) bool
	// metaKeep is Skim.Meta, in force (as keep) while the requests of a message other than a links_extracted
	// are read; headerKeep is Skim.Headers, for a page_crawled's response headers.
	metaKeep, headerKeep func(key []byte) bool
	slabs                       // the values' slabs: the reader's own, or its MsgpackDecoder's
	urls                 []byte // slab for the URLs of a links or seeds list (listURL), the list's own
	listLeft             int    // while a list is read, its requests not read yet (request), else 0
	// domainRaw and domain are the bytes and the decoded value of the last meta domain map read: the next
	// request's domain map with the same bytes shares that value instead of being built again (see
	// sharedDomain).
	domainRaw []byte
	domain    frontier.Value
	shared    *MsgpackDecoder // nil, or the decoder whose domain maps outlive the message
	// dropped is the bytes of the last map keptMap skipped (a link's domain map, which the links of a
	// links_extracted repeat byte for byte): the next one with the same bytes is passed over without being walked.
	dropped []byte
}

// sharedDomain reads a meta domain map, reusing the previous request's when the bytes are the same. The spider
// splits a page's links per link host (spider/report.go), so every link of a links_extracted, and usually its
// page, carries one domain map byte for byte; built once, it saves seven boxed bins and a map per link, most
// of what decoding a link allocated (issue 21, item 4). msgpack decodes deterministically, so input that
// starts with the previous map's bytes decodes to that map and ends where it ended.
func (d *mpReader) sharedDomain(depth int) (frontier.Value, error) {
	if n := len(d.domainRaw); n > 0 && n <= len(d.b)-d.off && bytes.Equal(d.b[d.off:d.off+n], d.domainRaw) {
		d.off += n
		return d.domain, nil
	}
	start := d.off
	if d.shared != nil {
		if c, _ := d.peek("value"); c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf {
			if v, ok := d.sharedAcross(depth); ok {
				d.domainRaw, d.domain = d.b[start:d.off], v
				return v, nil
			}
			d.off = start
		}
	}
	v, err := d.value(depth)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(frontier.Map); ok {
		d.domainRaw, d.domain = d.b[start:d.off], v
	}
	return v, nil
}

// sharedAcross reads the domain map at the cursor through d.shared: the map decoded earlier from the same bytes,
// or a new one, decoded from a copy of its bytes and kept. ok is false when the bytes are not a well-formed map
// (the cursor is then anywhere: the caller decodes again from the start, for the error value gives).
func (d *mpReader) sharedAcross(depth int) (frontier.Value, bool) {
	start := d.off
	if d.skip(depth) != nil {
		return nil, false
	}
	raw := d.b[start:d.off]
	if v, ok := d.shared.domains[string(raw)]; ok {
		return v, true
	}
	own := mpReader{b: bytes.Clone(raw)}
	v, err := own.value(depth)
	if err != nil || own.off != len(own.b) {
		return nil, false
	}
	if len(d.shared.domains) >= maxSharedDomains {
		clear(d.shared.domains)
	}
	d.shared.domains[string(raw)] = v
	return v, true
}

// slabSize is own, the size of a new slab of a reader of its own, or shared, a MsgpackDecoder's.
func (d *mpReader) slabSize(own, shared int) int {
	if d.shared != nil {
		return shared
	}
	return own
}

// newMap returns a map of n entries cut from the entry slab, allocating a new slab of at least 16 entries when the
// current one is short. Maps of one message share a few slabs instead of one allocation each.
func (d *mpReader) newMap(n int) frontier.Map {
	if n == 0 {
		return frontier.Map{}
	}
	if cap(d.entries)-len(d.entries) < n {
		d.entries = make([]frontier.Entry, 0, max(n, d.slabSize(16, sharedEntrySlab)))
	}
	l := len(d.entries)
	d.entries = d.entries[:l+n]
	return frontier.Map(d.entries[l : l+n : l+n])
}

func (d *mpReader) errf(kind error, format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s: %w", d.off, fmt.Sprintf(format, args...), kind)
}

func (d *mpReader) end() error {
	if d.off != len(d.b) {
		return d.errf(ErrMalformed, "%d bytes of trailing data", len(d.b)-d.off)
	}
	return nil
}

func (d *mpReader) truncated(what string) error {
	return d.errf(ErrTruncated, "input ends inside %s", what)
}

// peek returns the next type byte without consuming it.
func (d *mpReader) peek(what string) (byte, error) {
	if d.off >= len(d.b) {
		return 0, d.truncated(what)
	}
	return d.b[d.off], nil
}

// take consumes n bytes; n was already checked to be non-negative.
func (d *mpReader) take(n int, what string) ([]byte, error) {
	if n > len(d.b)-d.off {
		return nil, d.errf(ErrTruncated, "%s of %d bytes, but only %d left", what, n, len(d.b)-d.off)
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p, nil
}

func (d *mpReader) uintN(size int, what string) (uint64, error) {
	p, err := d.take(size, what)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
	return binary.BigEndian.Uint64(p), nil
}

// typeName describes a msgpack type byte for error messages.
func typeName(c byte) string {
	switch {
	case c <= 0x7f, c >= 0xe0, c >= 0xcc && c <= 0xd3:
		return "int"
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		return "map"
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		return "array"
	case c >= 0xa0 && c <= 0xbf, c >= 0xd9 && c <= 0xdb:
		return "str"
	case c == 0xc0:
		return "nil"
	case c == 0xc2, c == 0xc3:
		return "bool"
	case c >= 0xc4 && c <= 0xc6:
		return "bin"
	case c == 0xca, c == 0xcb:
		return "float"
	case c == 0xc1:
		return "reserved byte 0xc1"
	}
	return fmt.Sprintf("ext (0x%02x)", c)
}

// isContainer reports whether c starts a map or an array (typeName "map" or "array") without building a name:
// every map key is checked.
func isContainer(c byte) bool {
	return c >= 0x80 && c <= 0x9f || c >= 0xdc && c <= 0xdf
}

func (d *mpReader) wrongType(want string, c byte) error {
	return d.errf(ErrMalformed, "want %s, got %s", want, typeName(c))
}

// length reads a container or string length of the given header sizes and checks that at least
// n*minBytes bytes remain, so no length prefix can make us allocate more than the input justifies.
func (d *mpReader) length(size int, minBytes int, what string) (int, error) {
	start := d.off
	if size > len(d.b)-d.off {
		return 0, d.errf(ErrTruncated, "input ends inside the length of %s", what)
	}
	u, err := d.uintN(size, what)
	if err != nil {
		return 0, err
	}
	if left := uint64(len(d.b) - d.off); u > left/uint64(minBytes) {
		d.off = start - 1
		return 0, d.errf(ErrTruncated, "%s of length %d, but only %d bytes left", what, u, left)
	}
	return int(u), nil
}

func (d *mpReader) arrayLen(what string) (int, error) {
	c, err := d.peek(what)
	if err != nil {
		return 0, err
	}
	switch {
	case c >= 0x90 && c <= 0x9f:
		d.off++
		n := int(c & 0x0f)
		if n > len(d.b)-d.off {
			d.off--
			return 0, d.errf(ErrTruncated, "%s of length %d, but only %d bytes left", what, n, len(d.b)-d.off-1)
		}
		return n, nil
	case c == 0xdc:
		d.off++
		return d.length(2, 1, what)
	case c == 0xdd:
		d.off++
		return d.length(4, 1, what)
	}
	return 0, d.wrongType(what+" (array)", c)
}

// mapLen reads a map header; nil counts as an empty map when nilOK (Frontera's `headers or {}`).
func (d *mpReader) mapLen(what string, nilOK bool) (int, error) {
	c, err := d.peek(what)
	if err != nil {
		return 0, err
	}
	switch {
	case c >= 0x80 && c <= 0x8f:
		d.off++
		n := int(c & 0x0f)
		if 2*n > len(d.b)-d.off {
			d.off--
			return 0, d.errf(ErrTruncated, "%s of %d entries, but only %d bytes left", what, n, len(d.b)-d.off-1)
		}
		return n, nil
	case c == 0xde:
		d.off++
		return d.length(2, 2, what)
	case c == 0xdf:
		d.off++
		return d.length(4, 2, what)
	case c == 0xc0 && nilOK:
		d.off++
		return 0, nil
	}
	return 0, d.wrongType(what+" (map)", c)
}

// rawStr reads a str or a bin (per accept) and returns its bytes (aliasing the input) and whether it was str.
func (d *mpReader) rawStrOrBin(what string, acceptStr, acceptBin bool) ([]byte, bool, error) {
	c, err := d.peek(what)
	if err != nil {
		return nil, false, err
	}
	var n int
	isStr := false
	switch {
	case c >= 0xa0 && c <= 0xbf && acceptStr:
		d.off++
		n, isStr = int(c&0x1f), true
	case c == 0xd9 && acceptStr:
		d.off++
		n, err = d.length(1, 1, what)
		isStr = true
	case c == 0xda && acceptStr:
		d.off++
		n, err = d.length(2, 1, what)
		isStr = true
	case c == 0xdb && acceptStr:
		d.off++
		n, err = d.length(4, 1, what)
		isStr = true
	case c == 0xc4 && acceptBin:
		d.off++
		n, err = d.length(1, 1, what)
	case c == 0xc5 && acceptBin:
		d.off++
		n, err = d.length(2, 1, what)
	case c == 0xc6 && acceptBin:
		d.off++
		n, err = d.length(4, 1, what)
	default:
		want := "bin or str"
		if !acceptStr {
			want = "bin"
		} else if !acceptBin {
			want = "str"
		}
		return nil, false, d.wrongType(what+" ("+want+")", c)
	}
	if err != nil {
		return nil, false, err
	}
	start := d.off
	p, err := d.take(n, what)
	if err != nil {
		return nil, false, err
	}
	if isStr && !utf8.Valid(p) {
		d.off = start
		return nil, false, d.errf(ErrMalformed, "%s is a str that is not valid UTF-8", what)
	}
	return p, isStr, nil
}

// str reads a str, or a bin holding UTF-8 (Frontera's to_native_str accepts both for urls and errors).
func (d *mpReader) str(what string) (string, error) {
	p, err := d.strBytes(what)
	if err != nil {
		return "", err
	}
	return string(p), nil
}

// strBytes is str's bytes, aliasing the input.
func (d *mpReader) strBytes(what string) ([]byte, error) {
	start := d.off
	p, isStr, err := d.rawStrOrBin(what, true, true)
	if err != nil {
		return nil, err
	}
	if !isStr && !utf8.Valid(p) {
		d.off = start
		return nil, d.errf(ErrMalformed, "%s is a bin that is not valid UTF-8", what)
	}
	return p, nil
}

// maxURLSlab bounds a slab of list URLs (listURL), but never below the one URL it is made for.
const maxURLSlab = 16 << 10

// listURL is str("url") for a request of a list (requests) of which left requests, this one included, are not
// read yet: the list's URLs are copied into a slab the reader keeps (sized for this URL and the list's next
// ones if about as long, at most the input left), one allocation for many instead of one per link, as the
// list's requests share one (d.reqs). The slab is written only past its length, each string's bytes once,
// before the string is made, so the strings never change. A URL kept after decoding keeps its slab alive, as a
// kept link keeps its list's request slab.
func (d *mpReader) listURL(left int) (string, error) {
	p, err := d.strBytes("url")
	if err != nil || len(p) == 0 {
		return "", err
	}
	if cap(d.urls)-len(d.urls) < len(p) {
		next := min(len(d.b)-d.off, (left-1)*(len(p)+len(p)/4+8), maxURLSlab) // the next URLs lie in the input left
		d.urls = make([]byte, 0, len(p)+max(next, 0))
	}
	l := len(d.urls)
	d.urls = append(d.urls, p...)
	return unsafe.String(&d.urls[l], len(p)), nil
}

func (d *mpReader) bin(what string) ([]byte, error) {
	p, _, err := d.rawStrOrBin(what, true, true)
	if err != nil {
		return nil, err
	}
	return p[:len(p):len(p)], nil
}

// internedKeyNames are the meta and domain keys Frontera writes, and those Frontier's spiders and workers add; internedKeyValues holds them pre-boxed (same
// order), so that decoding them allocates nothing. Decoded map keys may therefore be shared between messages:
// treat keys as read-only (Map.Set never mutates them).
var internedKeyNames = [...]string{"fingerprint", "domain", "jid", "score", "depth", "state", "scrapy_meta", "scrapy_callback", "scrapy_errback", "origin_is_frontier", "redirect_urls", "redirect_fingerprints", "redirect_domains", "encoding", "crawl_at", "slot", "netloc", "name", "scheme", "sld", "tld", "subdomain", "home", "seed", "robots", "sitemap",
	"frontier_discovered", "frontier_digest", "frontier_truncated", "frontier_not_before", "frontier_body",
	"redirect_times", "redirect_reasons", "retry_times", "dont_filter", "revisit_digest", "revisit_interval"}

var internedKeyValues = func() (v [len(internedKeyNames)]frontier.Value) {
	for i, k := range internedKeyNames {
		v[i] = []byte(k)
	}
	return v
}()

// internedKey returns the pre-boxed key equal to b, if b is one of internedKeyNames. A switch on the bytes (no
// hashing, no allocation) is about three times cheaper than the map lookup it replaced; every meta entry of every
// request decoded goes through it.
func internedKey(b []byte) (frontier.Value, bool) {
	i := -1
	switch string(b) {
	case "fingerprint":
		i = 0
	case "domain":
		i = 1
	case "jid":
		i = 2
	case "score":
		i = 3
	case "depth":
		i = 4
	case "state":
		i = 5
	case "scrapy_meta":
		i = 6
	case "scrapy_callback":
		i = 7
	case "scrapy_errback":
		i = 8
	case "origin_is_frontier":
		i = 9
	case "redirect_urls":
		i = 10
	case "redirect_fingerprints":
		i = 11
	case "redirect_domains":
		i = 12
	case "encoding":
		i = 13
	case "crawl_at":
		i = 14
	case "slot":
		i = 15
	case "netloc":
		i = 16
	case "name":
		i = 17
	case "scheme":
		i = 18
	case "sld":
		i = 19
	case "tld":
		i = 20
	case "subdomain":
		i = 21
	case "home":
		i = 22
	case "seed":
		i = 23
	case "robots":
		i = 24
	case "sitemap":
		i = 25
	case "frontier_discovered":
		i = 26
	case "frontier_digest":
		i = 27
	case "frontier_truncated":
		i = 28
	case "frontier_not_before":
		i = 29
	case "frontier_body":
		i = 30
	case "redirect_times":
		i = 31
	case "redirect_reasons":
		i = 32
	case "retry_times":
		i = 33
	case "dont_filter":
		i = 34
	case "revisit_digest":
		i = 35
	case "revisit_interval":
		i = 36
	}
	if i < 0 {
		return nil, false
	}
	return internedKeyValues[i], true
}

// mapKey reads a map key; bin keys Frontera uses come from internedKey.
func (d *mpReader) mapKey(depth int) (frontier.Value, error) {
	c := d.b[d.off]
	if c == 0xc4 && d.off+1 < len(d.b) {
		n := int(d.b[d.off+1])
		if end := d.off + 2 + n; n <= 21 && end <= len(d.b) {
			if k, ok := internedKey(d.b[d.off+2 : end]); ok {
				d.off = end
				return k, nil
			}
		}
	}
	return d.value(depth)
}

// intRaw reads any msgpack integer: as n, or as u (big set) when it needs uint64.
func (d *mpReader) intRaw(what string) (n int64, u uint64, big bool, err error) {
	c, err := d.peek(what)
	if err != nil {
		return 0, 0, false, err
	}
	switch {
	case c <= 0x7f:
		d.off++
		return int64(c), 0, false, nil
	case c >= 0xe0:
		d.off++
		return int64(int8(c)), 0, false, nil
	case c >= 0xcc && c <= 0xcf:
		d.off++
		u, err := d.uintN(1<<(c-0xcc), what)
		if err != nil {
			return 0, 0, false, err
		}
		if u > math.MaxInt64 {
			return 0, u, true, nil
		}
		return int64(u), 0, false, nil
	case c >= 0xd0 && c <= 0xd3:
		d.off++
		size := 1 << (c - 0xd0)
		u, err := d.uintN(size, what)
		if err != nil {
			return 0, 0, false, err
		}
		switch size {
		case 1:
			return int64(int8(u)), 0, false, nil
		case 2:
			return int64(int16(u)), 0, false, nil
		case 4:
			return int64(int32(u)), 0, false, nil
		}
		return int64(u), 0, false, nil
	}
	return 0, 0, false, d.wrongType(what+" (int)", c)
}

// intValue reads any msgpack integer; it returns int64 unless the value needs uint64.
func (d *mpReader) intValue(what string) (frontier.Value, error) {
	n, u, big, err := d.intRaw(what)
	switch {
	case err != nil:
		return nil, err
	case big:
		return u, nil
	}
	return n, nil
}

func (d *mpReader) int64(what string) (int64, error) {
	start := d.off
	n, u, big, err := d.intRaw(what)
	if err != nil {
		return 0, err
	}
	if big {
		d.off = start
		return 0, d.errf(ErrMalformed, "%s %d overflows int64", what, u)
	}
	return n, nil
}

func (d *mpReader) float(what string) (float64, error) {
	c, err := d.peek(what)
	if err != nil {
		return 0, err
	}
	switch c {
	case 0xcb:
		d.off++
		u, err := d.uintN(8, what)
		return math.Float64frombits(u), err
	case 0xca:
		d.off++
		u, err := d.uintN(4, what)
		return float64(math.Float32frombits(uint32(u))), err
	}
	if t := typeName(c); t != "int" {
		return 0, d.wrongType(what+" (float)", c)
	}
	n, u, big, err := d.intRaw(what)
	switch {
	case err != nil:
		return 0, err
	case big:
		return float64(u), nil
	}
	return float64(n), nil
}

func (d *mpReader) bool(what string) (bool, error) {
	c, err := d.peek(what)
	if err != nil {
		return false, err
	}
	switch c {
	case 0xc2:
		d.off++
		return false, nil
	case 0xc3:
		d.off++
		return true, nil
	}
	return false, d.wrongType(what+" (bool)", c)
}

// value reads any msgpack object as a frontier.Value.
func (d *mpReader) value(depth int) (frontier.Value, error) {
	if depth > MaxDepth {
		return nil, d.errf(ErrMalformed, "nesting deeper than %d", MaxDepth)
	}
	c, err := d.peek("value")
	if err != nil {
		return nil, err
	}
	switch {
	case c <= 0x7f, c >= 0xe0:
		return d.intValue("int") // 0…127 and -32…-1: int64s the runtime boxes without allocating when >= 0
	case c >= 0xcc && c <= 0xd3:
		n, u, big, err := d.intRaw("int")
		switch {
		case err != nil:
			return nil, err
		case big:
			return u, nil
		}
		return d.boxInt(n), nil
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		return d.mapValue("map", depth)
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		n, err := d.arrayLen("array")
		if err != nil {
			return nil, err
		}
		l := make([]frontier.Value, n)
		for i := range l {
			if l[i], err = d.value(depth + 1); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return l, nil
	case c >= 0xa0 && c <= 0xbf, c >= 0xd9 && c <= 0xdb:
		return d.str("str")
	case c >= 0xc4 && c <= 0xc6:
		p, err := d.bin("bin")
		if err != nil {
			return nil, err
		}
		return d.boxBin(p), nil
	case c == 0xc0:
		d.off++
		return nil, nil
	case c == 0xc2, c == 0xc3:
		return d.bool("bool")
	case c == 0xca, c == 0xcb:
		f, err := d.float("float")
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return nil, d.errf(ErrMalformed, "unsupported msgpack type %s", typeName(c))
}

// eface is the layout of a value of an empty interface type (frontier.Value): its dynamic type and a pointer to
// its value, for boxBin and boxInt.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// binType and int64Type are the dynamic types of a boxed []byte and int64.
var (
	binType   = typeOf([]byte(nil))
	int64Type = typeOf(int64(0))
)

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// boxSlab is how many values a slab of boxed bins or ints holds: the first of a message 4 (a request's meta
// has a few), the next ones 16 (a links_extracted has one or two per link).
const boxSlab = 16

// boxSlabCap is the capacity of a reader's next slab, given the one it fills (nil at first).
func boxSlabCap(cur int) int {
	if cur == 0 {
		return 4
	}
	return boxSlab
}

// boxBin returns p as a frontier.Value whose slice header is cut from a slab the reader keeps (one allocation
// per boxSlab bins instead of one per bin: a link's fingerprint, a page's digest). A value in an interface is
// never written through it (an assertion copies it out), and the reader writes each slab element once, before
// boxing it, so the boxed header never changes. A value kept after decoding keeps its slab (at most 16
// headers) alive, as it keeps the input bytes it aliases anyway.
func (d *mpReader) boxBin(p []byte) frontier.Value {
	if len(d.bins) == cap(d.bins) {
		d.bins = make([][]byte, 0, d.slabSize(boxSlabCap(cap(d.bins)), sharedBoxSlab))
	}
	d.bins = append(d.bins, p)
	var v frontier.Value
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: binType, data: unsafe.Pointer(&d.bins[len(d.bins)-1])}
	return v
}

// boxInt is boxBin for an int64 (a discovery time, a job id; the runtime boxes 0…255 without allocating).
func (d *mpReader) boxInt(n int64) frontier.Value {
	if n >= 0 && n < 256 {
		return n
	}
	if len(d.ints) == cap(d.ints) {
		d.ints = make([]int64, 0, d.slabSize(boxSlabCap(cap(d.ints)), sharedBoxSlab))
	}
	d.ints = append(d.ints, n)
	var v frontier.Value
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: int64Type, data: unsafe.Pointer(&d.ints[len(d.ints)-1])}
	return v
}

// mapValue reads a map with scalar keys (Python dict keys must be hashable).
func (d *mpReader) mapValue(what string, depth int) (frontier.Map, error) {
	n, err := d.mapLen(what, false)
	if err != nil {
		return nil, err
	}
	m := d.newMap(n)
	for i := range m {
		c, err := d.peek("map key")
		if err != nil {
			return nil, err
		}
		if isContainer(c) {
			return nil, d.errf(ErrMalformed, "map key is an unhashable %s", typeName(c))
		}
		k, err := d.mapKey(depth + 1)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		var v frontier.Value
		if depth == 1 && isDomainKey(k) {
			v, err = d.sharedDomain(depth + 1)
		} else {
			v, err = d.value(depth + 1)
		}
		if err != nil {
			return nil, fmt.Errorf("[%s]: %w", describeKey(k), err)
		}
		m[i] = frontier.Entry{Key: k, Value: v}
	}
	return m, nil
}

// isDomainKey reports whether a meta key is b"domain" (the interned key, or the same bytes).
func isDomainKey(k frontier.Value) bool {
	b, ok := k.([]byte)
	return ok && string(b) == frontier.MetaKeyDomain
}

// keptMap is mapValue keeping only the entries whose str or bin key d.keep accepts (and every entry with
// another kind of key); the values of the others are checked by skip and not built.
func (d *mpReader) keptMap(what string, depth int) (frontier.Map, error) {
	n, err := d.mapLen(what, false)
	if err != nil {
		return nil, err
	}
	// The kept entries are gathered here and cut from the slab once counted: a map of which a few entries are
	// kept takes those few, not n.
	var local [8]frontier.Entry
	kept := local[:0]
	for i := range n {
		c, err := d.peek("map key")
		if err != nil {
			return nil, err
		}
		if isContainer(c) {
			return nil, d.errf(ErrMalformed, "map key is an unhashable %s", typeName(c))
		}
		k, err := d.mapKey(depth + 1)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		var drop bool
		switch k := k.(type) { // the body entry is always kept: meta moves it to Request.Body
		case []byte:
			drop = string(k) != frontier.MetaKeyBody && !d.keep(k)
		case string:
			drop = k != frontier.MetaKeyBody && !d.keep([]byte(k))
		}
		if drop {
			// Bytes that start with a value skip accepted at this depth are that value (msgpack reads
			// deterministically), so they are passed over by length.
			if n := len(d.dropped); n > 0 && n <= len(d.b)-d.off && bytes.Equal(d.b[d.off:d.off+n], d.dropped) {
				d.off += n
				continue
			}
			start := d.off
			if err := d.skip(depth + 1); err != nil {
				return nil, fmt.Errorf("[%s]: %w", describeKey(k), err)
			}
			if c := d.b[start]; c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf { // a map
				d.dropped = d.b[start:d.off]
			}
			continue
		}
		var v frontier.Value
		if depth == 1 && isDomainKey(k) {
			v, err = d.sharedDomain(depth + 1)
		} else {
			v, err = d.value(depth + 1)
		}
		if err != nil {
			return nil, fmt.Errorf("[%s]: %w", describeKey(k), err)
		}
		kept = append(kept, frontier.Entry{Key: k, Value: v})
	}
	m := d.newMap(len(kept))
	copy(m, kept)
	return m, nil
}

// skip moves past one value, accepting what value accepts, without building it.
func (d *mpReader) skip(depth int) error {
	if depth < MaxDepth && d.off < len(d.b) && d.b[d.off]&0xf0 == 0x80 && d.skipFlat() {
		return nil
	}
	return d.skipWalk(depth)
}

// skipFlat passes over a fixmap whose keys and values are all fixstr, str 8 or bin 8 (a meta domain map, what
// skip mostly meets: about half of the DB worker's decode of an update_score was walking one) by their
// lengths alone, checking what skipWalk checks of them (in bounds; a str is UTF-8). It reports false, the
// cursor unmoved, at anything else or any fault: skipWalk then walks the value and reports the fault as before.
func (d *mpReader) skipFlat() bool {
	b, off := d.b, d.off
	n := 2 * int(b[off]&0x0f)
	off++
	for range n {
		if off >= len(b) {
			return false
		}
		c, l, str := b[off], 0, false
		switch {
		case c >= 0xa0 && c <= 0xbf:
			l, str = int(c&0x1f), true
			off++
		case c == 0xd9 || c == 0xc4:
			if off+1 >= len(b) {
				return false
			}
			l, str = int(b[off+1]), c == 0xd9
			off += 2
		default:
			return false
		}
		if l > len(b)-off || str && !utf8.Valid(b[off:off+l]) {
			return false
		}
		off += l
	}
	d.off = off
	return true
}

// skipWalk is skip, walking the value whatever it is.
func (d *mpReader) skipWalk(depth int) error {
	if depth > MaxDepth {
		return d.errf(ErrMalformed, "nesting deeper than %d", MaxDepth)
	}
	c, err := d.peek("value")
	if err != nil {
		return err
	}
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		d.off++
		return nil
	case c >= 0xcc && c <= 0xd3:
		_, _, _, err := d.intRaw("int")
		return err
	case c == 0xca, c == 0xcb:
		_, err := d.float("float")
		return err
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		n, err := d.mapLen("map", false)
		if err != nil {
			return err
		}
		for i := range n {
			kc, err := d.peek("map key")
			if err != nil {
				return err
			}
			if typeName(kc) == "map" || typeName(kc) == "array" {
				return d.errf(ErrMalformed, "map key is an unhashable %s", typeName(kc))
			}
			if err := d.skip(depth + 1); err != nil {
				return fmt.Errorf("key %d: %w", i, err)
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		n, err := d.arrayLen("array")
		if err != nil {
			return err
		}
		for i := range n {
			if err := d.skip(depth + 1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case c >= 0xa0 && c <= 0xbf, c >= 0xd9 && c <= 0xdb:
		_, _, err := d.rawStrOrBin("str", true, false)
		return err
	case c >= 0xc4 && c <= 0xc6:
		_, _, err := d.rawStrOrBin("bin", false, true)
		return err
	}
	return d.errf(ErrMalformed, "unsupported msgpack type %s", typeName(c))
}

// meta reads a meta map (nil → empty) and moves MetaKeyBody into *body.
func (d *mpReader) meta(body *[]byte) (frontier.Map, error) {
	if c, err := d.peek("meta"); err != nil {
		return nil, err
	} else if c == 0xc0 {
		d.off++
		return nil, nil
	}
	var m frontier.Map
	var err error
	if d.keep != nil {
		m, err = d.keptMap("meta", 1)
	} else {
		m, err = d.mapValue("meta", 1)
	}
	if err != nil {
		return nil, err
	}
	for i, e := range m {
		if k, ok := e.Key.([]byte); ok && string(k) == frontier.MetaKeyBody {
			if p, ok := e.Value.([]byte); ok {
				*body = p
				return append(m[:i], m[i+1:]...), nil
			}
		}
	}
	return m, nil
}

func (d *mpReader) headers() (frontier.Headers, error) {
	n, err := d.mapLen("headers", true)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	h := make(frontier.Headers, n)
	for i := range h {
		if h[i].Name, err = d.bin("header name"); err != nil {
			return nil, err
		}
		if h[i].Values, err = d.headerValues(h[i].Name, true); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// keptHeaders is headers keeping only the headers whose name d.headerKeep accepts; the values of the others are
// checked as headers checks them and not built.
func (d *mpReader) keptHeaders() (frontier.Headers, error) {
	n, err := d.mapLen("headers", true)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	var h frontier.Headers
	for range n {
		name, err := d.bin("header name")
		if err != nil {
			return nil, err
		}
		keep := d.headerKeep(name)
		vs, err := d.headerValues(name, keep)
		if err != nil {
			return nil, err
		}
		if keep {
			h = append(h, frontier.Header{Name: name, Values: vs})
		}
	}
	if h == nil {
		h = frontier.Headers{}
	}
	return h, nil
}

// headerValues reads one header's values: a bin or str (one value), nil (none) or an array of them. Without
// build they are checked the same way and not built (keptHeaders passes over the headers it does not keep).
func (d *mpReader) headerValues(name []byte, build bool) ([][]byte, error) {
	c, err := d.peek("header value")
	if err != nil {
		return nil, err
	}
	if c >= 0xc4 && c <= 0xc6 || c >= 0xa0 && c <= 0xbf || c >= 0xd9 && c <= 0xdb {
		v, err := d.bin("header value")
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", name, err)
		}
		if !build {
			return nil, nil
		}
		return [][]byte{v}, nil
	}
	if c == 0xc0 {
		d.off++
		return nil, nil
	}
	k, err := d.arrayLen("header values")
	if err != nil {
		return nil, fmt.Errorf("header %q: %w", name, err)
	}
	var vs [][]byte
	if build {
		vs = make([][]byte, k)
	}
	for j := range k {
		v, err := d.bin("header value")
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", name, err)
		}
		if build {
			vs[j] = v
		}
	}
	return vs, nil
}

var methods = map[string]string{"GET": "GET", "POST": "POST", "HEAD": "HEAD", "PUT": "PUT", "DELETE": "DELETE"}

func (d *mpReader) request() (*frontier.Request, error) { return d.requestInto(nil) }

// requestInto reads a request into r, or, r nil, into the list's slab (requests) or a new one. A message that
// carries one request allocates it with the message (message): one allocation for both.
func (d *mpReader) requestInto(r *frontier.Request) (*frontier.Request, error) {
	n, err := d.arrayLen("request")
	if err != nil {
		return nil, err
	}
	if n != 5 {
		d.off--
		return nil, d.errf(ErrMalformed, "request array has %d elements, want 5 [url, method, headers, cookies, meta]", n)
	}
	if r == nil {
		if len(d.reqs) < cap(d.reqs) {
			d.reqs = d.reqs[:len(d.reqs)+1]
			r = &d.reqs[len(d.reqs)-1]
		} else {
			r = &frontier.Request{}
		}
	}
	if d.listLeft > 0 {
		r.URL, err = d.listURL(d.listLeft)
		d.listLeft--
	} else {
		r.URL, err = d.str("url")
	}
	if err != nil {
		return nil, err
	}
	if c, _ := d.peek("method"); c == 0xc0 {
		d.off++
	} else {
		m, _, err := d.rawStrOrBin("method", true, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.URL, err)
		}
		if s, ok := methods[string(m)]; ok {
			r.Method = s
		} else {
			r.Method = string(m)
		}
	}
	if r.Headers, err = d.headers(); err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	nc, err := d.mapLen("cookies", true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if nc > 0 {
		r.Cookies = make([]frontier.Cookie, nc)
		for i := range r.Cookies {
			if r.Cookies[i].Name, err = d.str("cookie name"); err != nil {
				return nil, fmt.Errorf("%s: %w", r.URL, err)
			}
			if r.Cookies[i].Value, err = d.str("cookie value"); err != nil {
				return nil, fmt.Errorf("%s: cookie %q: %w", r.URL, r.Cookies[i].Name, err)
			}
		}
	}
	if r.Meta, err = d.meta(&r.Body); err != nil {
		return nil, fmt.Errorf("%s: meta: %w", r.URL, err)
	}
	return r, nil
}

func (d *mpReader) response() (*frontier.Response, error) {
	var rr struct {
		resp frontier.Response
		req  frontier.Request
	}
	return d.responseInto(&rr.resp, &rr.req)
}

// responseInto reads a response into r, and its request's meta into req (r.Request).
func (d *mpReader) responseInto(r *frontier.Response, req *frontier.Request) (*frontier.Response, error) {
	n, err := d.arrayLen("response")
	if err != nil {
		return nil, err
	}
	if n != 5 {
		d.off--
		return nil, d.errf(ErrMalformed, "response array has %d elements, want 5 [url, status, meta, headers, body]", n)
	}
	r.Request = req
	if r.URL, err = d.str("url"); err != nil {
		return nil, err
	}
	r.Request.URL = r.URL
	st, err := d.int64("status")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if st < math.MinInt32 || st > math.MaxInt32 {
		return nil, fmt.Errorf("%s: %w", r.URL, d.errf(ErrMalformed, "status %d out of range", st))
	}
	r.Status = int(st)
	if r.Request.Meta, err = d.meta(&r.Request.Body); err != nil {
		return nil, fmt.Errorf("%s: meta: %w", r.URL, err)
	}
	if d.headerKeep != nil {
		r.Headers, err = d.keptHeaders()
	} else {
		r.Headers, err = d.headers()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	if c, err := d.peek("body"); err != nil {
		return nil, err
	} else if c == 0xc0 {
		d.off++
	} else if r.Body, err = d.bin("body"); err != nil {
		return nil, fmt.Errorf("%s: %w", r.URL, err)
	}
	return r, nil
}

func (d *mpReader) requests(what string) ([]*frontier.Request, error) {
	n, err := d.arrayLen(what)
	if err != nil {
		return nil, err
	}
	// The list's requests share one allocation. n ≤ bytes left (checked by arrayLen), and a request takes at
	// least 6 bytes, so the slab stays proportional to the input. A MsgpackDecoder's slabs (requests and their
	// pointers) serve several lists; a new one is at least sharedReqSlab long.
	need := min(n, (len(d.b)-d.off)/6+1)
	var out []*frontier.Request
	if d.shared != nil {
		if cap(d.ptrs)-len(d.ptrs) < n {
			d.ptrs = make([]*frontier.Request, 0, max(n, sharedReqSlab))
		}
		l := len(d.ptrs)
		d.ptrs = d.ptrs[:l+n]
		out = d.ptrs[l : l+n : l+n]
		if cap(d.reqs)-len(d.reqs) < need {
			d.reqs = make([]frontier.Request, 0, max(need, sharedReqSlab))
		}
	} else {
		out = make([]*frontier.Request, n)
		d.reqs = make([]frontier.Request, 0, need)
	}
	for i := range out {
		d.listLeft = n - i
		if out[i], err = d.request(); err != nil {
			d.listLeft = 0
			return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
	}
	d.listLeft = 0
	return out, nil
}

var tagNames = map[string]string{
	frontier.TagPageCrawled: "page_crawled", frontier.TagLinksExtracted: "links_extracted",
	frontier.TagRequestError: "request_error", frontier.TagOffset: "offset", frontier.TagUpdateScore: "update_score",
	frontier.TagNewJobID: "new_job_id", frontier.TagStats: "stats", frontier.TagAddSeeds: "add_seeds",
}

var tagArity = map[string]int{"pc": 2, "le": 3, "re": 3, "of": 3, "us": 4, "njid": 2, "st": 2, "as": 2}

func (d *mpReader) message() (frontier.Message, string, error) {
	n, err := d.arrayLen("message")
	if err != nil {
		return nil, "", err
	}
	if n == 0 {
		d.off--
		return nil, "", d.errf(ErrMalformed, "message array is empty")
	}
	tagAt := d.off
	tag, isStr, err := d.rawStrOrBin("tag", true, true)
	if err != nil {
		return nil, "", err
	}
	name, known := tagNames[string(tag)]
	if !known {
		d.off = tagAt
		return nil, "", d.errf(ErrUnknownTag, "tag %q", tag)
	}
	if isStr {
		d.off = tagAt
		return nil, name, d.errf(ErrUnknownTag, "tag %q is str; Frontera sends it as bin", tag)
	}
	if want := tagArity[string(tag)]; n != want {
		d.off = 0
		return nil, name, d.errf(ErrMalformed, "message array has %d elements, want %d", n, want)
	}
	d.keep = d.metaKeep
	switch string(tag) {
	case frontier.TagPageCrawled:
		// The message, its response and its request in one allocation (as the other messages below).
		m := &struct {
			m    frontier.PageCrawled
			resp frontier.Response
			req  frontier.Request
		}{}
		r, err := d.responseInto(&m.resp, &m.req)
		if err != nil {
			return nil, name, err
		}
		m.m.Response = r
		return &m.m, name, nil
	case frontier.TagLinksExtracted:
		d.keep = d.linksKeep
		m := &struct {
			m   frontier.LinksExtracted
			req frontier.Request
		}{}
		r, err := d.requestInto(&m.req)
		if err != nil {
			d.keep = nil
			return nil, name, fmt.Errorf("request: %w", err)
		}
		links, err := d.requests("links")
		d.keep = nil
		if err != nil {
			return nil, name, err
		}
		m.m = frontier.LinksExtracted{Request: r, Links: links}
		return &m.m, name, nil
	case frontier.TagRequestError:
		m := &struct {
			m   frontier.RequestError
			req frontier.Request
		}{}
		r, err := d.requestInto(&m.req)
		if err != nil {
			return nil, name, fmt.Errorf("request: %w", err)
		}
		e, err := d.str("error")
		if err != nil {
			return nil, name, err
		}
		m.m = frontier.RequestError{Request: r, Error: e}
		return &m.m, name, nil
	case frontier.TagOffset:
		p, err := d.int64("partition")
		if err != nil {
			return nil, name, err
		}
		if p < math.MinInt32 || p > math.MaxInt32 {
			return nil, name, d.errf(ErrMalformed, "partition %d out of range", p)
		}
		o, err := d.int64("offset")
		if err != nil {
			return nil, name, err
		}
		return &frontier.Offset{Partition: int(p), Offset: o}, name, nil
	case frontier.TagUpdateScore:
		m := &struct {
			m   frontier.UpdateScore
			req frontier.Request
		}{}
		r, err := d.requestInto(&m.req)
		if err != nil {
			return nil, name, fmt.Errorf("request: %w", err)
		}
		s, err := d.float("score")
		if err != nil {
			return nil, name, err
		}
		sch, err := d.bool("schedule")
		if err != nil {
			return nil, name, err
		}
		m.m = frontier.UpdateScore{Request: r, Score: s, Schedule: sch}
		return &m.m, name, nil
	case frontier.TagNewJobID:
		id, err := d.int64("job id")
		if err != nil {
			return nil, name, err
		}
		return &frontier.NewJobID{ID: id}, name, nil
	case frontier.TagStats:
		m, err := d.mapValue("stats", 1)
		if err != nil {
			return nil, name, err
		}
		return &frontier.Stats{Map: m}, name, nil
	case frontier.TagAddSeeds:
		seeds, err := d.requests("seeds")
		if err != nil {
			return nil, name, err
		}
		return &frontier.AddSeeds{Seeds: seeds}, name, nil
	}
	return nil, name, d.errf(ErrUnknownTag, "tag %q", tag)
}
