// Package codec turns Frontier's messages (frontier.Message) and spider-feed requests into bytes and back, in
// the two wire formats of Frontera 0.8.1: msgpack (the default, MESSAGE_BUS_CODEC = …codecs.msgpack) and JSON
// (…codecs.json). The bytes equal Frontera's own, so a Scrapy spider running Frontera's message-bus backend can
// talk to Frontier's workers and the reverse. Choose a codec by name with New("msgpack") or New("json").
//
// # Wire layout (msgpack)
//
// Messages are positional arrays tagged with a bin tag; feed items are bare request arrays:
//
//	request           [url:str, method:bin, headers:{bin: [bin…]}, cookies:{str: str}, meta:{…}]
//	response          [url:str, status:int, meta:{…}, headers:{bin: [bin…]}, body:bin|nil]
//	PageCrawled       [b"pc", response]
//	LinksExtracted    [b"le", request, [request…]]
//	RequestError      [b"re", request, error:str]
//	Offset            [b"of", partition:int, offset:int]
//	UpdateScore       [b"us", request, score:float, schedule:bool]
//	NewJobID          [b"njid", id:int]
//	Stats             [b"st", {…}]
//	AddSeeds          [b"as", [request…]]   (Frontera 0.7; Frontier injects seeds with it)
//
// Integers take the smallest msgpack encoding (unsigned types for non-negative values, as msgpack-python does),
// floats are float64, maps keep their order and bin/str keep their distinction (frontier.Value), so a message
// decoded from Frontera re-encodes to the same bytes.
//
// Extensions Frontera lacks travel in meta keys it ignores: a non-empty Request.Body is written as the last meta
// entry under frontier.MetaKeyBody (bin) and moved back into Body on decode; a body-less request is
// byte-identical to Frontera's.
//
// # Why hand-written
//
// Encoding and decoding are written by hand over the msgpack format rather than through
// github.com/vmihailenco/msgpack/v5's reflection or its Encoder/Decoder streams: the feed request is the hot path
// (every URL crosses it twice), and append-style encoding into one caller-owned buffer, with no reflection, no
// io.Writer indirection and no intermediate tree, allocates once per message (or never, with AppendRequest).
// Frontera's byte layout also needs control the library does not give directly: ordered maps with mixed bin/str
// keys, msgpack-python's choice of integer encodings, and the bin tag check. Writing the decoder by hand makes
// the bounds and error guarantees below easy to audit. msgpack/v5 is used in the fuzz test as an independent
// reader of our bytes.
//
// # Decoding untrusted bytes
//
// Decoders never panic on bad input. They return an error that names the message, the field path and the byte
// offset, e.g.
//
//	codec: msgpack: links_extracted: links[3]: http://example.com/: meta: [b"domain"]: [b"name"]: at byte 472:
//	float of 8 bytes, but only 5 left: codec: input truncated
//
// and wrap
// one of ErrTruncated, ErrUnknownTag or ErrMalformed for errors.Is. A length prefix is checked against the bytes
// left before anything is allocated, so memory stays proportional to the input, and nesting is limited to
// MaxDepth levels.
//
// # Lossy corners
//
// The Go model is narrower than Python's, so a few shapes Frontera accepts decode but re-encode differently:
// a header whose value is a single bin instead of a list (Frontera's Discovery strategy sends one) becomes a
// one-value list; str header names, bin URLs, bin cookies and float32 values are normalised to the types above;
// a nil header value becomes an empty list; an int score in update_score becomes a float; a meta entry under a
// str "frontier_body" key is dropped on encode. Cookies must be str → str (Scrapy's list-of-dicts form is an
// error). The JSON codec carries bytes as UTF-8 text (as Frontera's does),
// so a non-UTF-8 bin value, including a binary request body, cannot be JSON-encoded and is an error.
//
// # Concurrency
//
// Codecs are stateless values, safe for concurrent use. Decoded messages share no memory with the input: the
// msgpack decoder copies the input once and its bin values alias that private copy (so a retained fingerprint
// keeps its message's bytes alive), and bin map keys that Frontera uses (fingerprint, domain, jid, …) are shared,
// pre-allocated values. Treat decoded map keys as read-only. Within one message, a request's meta domain map
// whose bytes equal the previous request's is decoded once and shared by both (a links_extracted's links to one
// host all carry the same map): treat decoded domain maps as read-only too (frontier.Request.SetMetaDomain
// replaces the map rather than writing into it).
//
// # Performance
//
// Measured figures are in bench/results/codec.md (BenchmarkAppendRequest, BenchmarkEncodeRequest, …). Encoding
// a feed request allocates once (EncodeRequest) or never (AppendRequest with a reused buffer). Decoding allocates
// per dynamic value, because frontier.Value is an interface: boxing a float64 or a string costs an allocation.
// Bins and int64s past 255 (a link's fingerprint and discovery time, in every link of the spider log) are the
// exception: the msgpack decoder boxes them into small per-message slabs (boxBin, boxInt), one allocation per
// 4 to 16 values. Go has no safe way to make an interface value point into a slab, so those two functions write
// the empty interface's two words (type, data pointer) with package unsafe; TestBoxedValuesSurviveGC and the
// -d=checkptr runs hold them to it, and a change of that layout in a future Go release would break them there.
// The URLs of a list of requests (a links_extracted's links, an add_seeds' seeds) are likewise copied into one
// slab per list and made strings with unsafe.String (listURL), each slab byte written once before its string
// is made: one allocation per list instead of one per URL. A MsgpackDecoder carries its slabs (maps' entries,
// boxed bins and ints, a list's requests) from one message to the next, so a consumer's stream of messages
// shares them too; the URLs' slab stays per list.
//
// The package imports only the standard library and the root frontier package (plus msgpack/v5 and go-cmp in
// tests). It must not import partition, bus or any store.
package codec

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	frontier "github.com/frontiercrawl/frontier"
)

// MaxDepth bounds the nesting of values (maps and lists inside meta) in both directions.
const MaxDepth = 256

// Errors wrapped by the decoders.
var (
	ErrTruncated  = errors.New("codec: input truncated")
	ErrUnknownTag = errors.New("codec: unknown message type")
	ErrMalformed  = errors.New("codec: malformed input")
)

// Encoder turns messages and feed requests into bytes. The returned slice is freshly allocated.
type Encoder interface {
	EncodeMessage(frontier.Message) ([]byte, error)
	EncodeRequest(*frontier.Request) ([]byte, error)
}

// Decoder turns bytes into messages and feed requests.
type Decoder interface {
	DecodeMessage([]byte) (frontier.Message, error)
	DecodeRequest([]byte) (*frontier.Request, error)
}

// LinksMetaDecoder is implemented by codecs that can decode a message leaving out, unbuilt, the meta entries
// of a links_extracted (its page's request and its links) whose key keep rejects. A consumer that reads a few
// keys of each (the DB worker's links role: fingerprint, depth, redirect_times) skips the rest, chiefly each
// link's domain map, which the strategy worker decodes from the same message anyway (issue 21: every
// spider-log message was decoded whole twice). Other messages are decoded whole. Msgpack implements it.
type LinksMetaDecoder interface {
	DecodeMessageLinksMeta(p []byte, keep func(key []byte) bool) (frontier.Message, error)
}

// Skim says what of a message a consumer reads, for SkimDecoder: the rest is checked as DecodeMessage checks
// it (the same inputs are rejected) and passed over without being built. The zero Skim decodes whole.
type Skim struct {
	// LinksMeta keeps, of a links_extracted's page request and links, only the meta entries whose str or bin
	// key it accepts (as LinksMetaDecoder's keep). nil keeps all.
	LinksMeta func(key []byte) bool
	// Meta is LinksMeta for the requests of every other message (a page_crawled's, a request_error's, an
	// update_score's, the seeds). nil keeps all.
	Meta func(key []byte) bool
	// Headers keeps, of a page_crawled's response headers, only those whose name it accepts. nil keeps all.
	Headers func(name []byte) bool
	// Borrow decodes without a private copy of the input: the decoded bin values alias it, so the caller must
	// leave it unchanged while it reads the message (a consumer that copies out what it keeps before its
	// batch's bytes go: the DB worker's links and scoring roles).
	Borrow bool
}

// SkimDecoder is implemented by codecs that can decode a message as a Skim says (Msgpack and MsgpackDecoder do).
// The DB worker reads a few meta keys and one header of the spider log's messages, which the strategy worker
// decodes anyway; the DB worker's decode was a third of its CPU (issue 21 item 4, issue 23).
type SkimDecoder interface {
	DecodeMessageSkim(p []byte, s Skim) (frontier.Message, error)
}

// RequestMetaDecoder is implemented by codecs that can decode a spider-feed request keeping only the meta
// entries whose key keep accepts (Msgpack does); it rejects exactly what DecodeRequest rejects. The URLFrontier
// gateway reads a feed request's URL and its own few meta keys (issue 23).
type RequestMetaDecoder interface {
	DecodeRequestMeta(p []byte, keep func(key []byte) bool) (*frontier.Request, error)
}

// RequestSkimDecoder is implemented by decoders that can decode spider-feed requests one after another for one
// goroutine (MsgpackDecoder does): DecodeRequestSkim(p, keep, false) decodes as RequestMetaDecoder's
// DecodeRequestMeta(p, keep); with borrow, the request's bin values may alias p, so the caller must leave p
// unchanged while it reads the request (the URLFrontier gateway, which copies out what it keeps).
type RequestSkimDecoder interface {
	DecodeRequestSkim(p []byte, keep func(key []byte) bool, borrow bool) (*frontier.Request, error)
}

// MessageDecoderMaker is implemented by codecs whose decoding can share work across the messages one consumer
// decodes one after another: NewMessageDecoder returns a decoder for one goroutine. Msgpack's shares the meta
// domain maps (see MsgpackDecoder). Use NewMessageDecoder(c) to get one from any codec.
type MessageDecoderMaker interface {
	NewMessageDecoder() MessageDecoder
}

// MessageDecoder decodes spider-log messages for one goroutine (it may keep state between calls).
type MessageDecoder interface {
	DecodeMessage([]byte) (frontier.Message, error)
}

// NewMessageDecoder returns c's MessageDecoder when it has one (MessageDecoderMaker), and c itself otherwise.
// Either decodes every message as c.DecodeMessage does.
func NewMessageDecoder(c Decoder) MessageDecoder {
	if m, ok := c.(MessageDecoderMaker); ok {
		return m.NewMessageDecoder()
	}
	return c
}

// Codec is an Encoder and a Decoder for one wire format.
type Codec interface {
	Encoder
	Decoder
	// Name returns the name New knows the codec by.
	Name() string
}

var codecs = map[string]Codec{
	"msgpack": Msgpack{},
	"json":    JSON{},
}

// New returns the codec called name: "msgpack" (Frontera's default) or "json". Frontera's module paths
// (frontera.contrib.backends.remote.codecs.msgpack, ….json) are accepted too. An unknown name is an error listing
// the known ones.
func New(name string) (Codec, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	key = strings.TrimPrefix(key, "frontera.contrib.backends.remote.codecs.")
	if c, ok := codecs[key]; ok {
		return c, nil
	}
	known := make([]string, 0, len(codecs))
	for k := range codecs {
		known = append(known, k)
	}
	sort.Strings(known)
	return nil, fmt.Errorf("codec: unknown codec %q (known: %s)", name, strings.Join(known, ", "))
}
