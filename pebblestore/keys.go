package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/state"
)

const (
	pfxState   = 's'
	pfxReady   = 'q'
	pfxDelayed = 'w'
	pfxIndex   = 'i'
	pfxCount   = 'c'
	pfxPage    = 'm'
	pfxDomain  = 'd'
	pfxMark    = 'k' // highest Seq applied per counter, domain and source (metadata.Tally)
	pfxMeta    = 'z'
)

// maxPartition is the largest partition a key can hold.
const maxPartition = math.MaxUint32

var keyBloomClean = []byte{pfxMeta, 'b', 'l', 'o', 'o', 'm', '-', 'c', 'l', 'e', 'a', 'n'}

func prefixed(p byte, b []byte) []byte {
	k := make([]byte, 1+len(b))
	k[0] = p
	copy(k[1:], b)
	return k
}

// prefixEnd returns the smallest key greater than every key starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func stateValue(e state.Entry) []byte {
	if e.RevisitAt == 0 {
		return []byte{byte(e.State)}
	}
	return binary.BigEndian.AppendUint64([]byte{byte(e.State)}, uint64(e.RevisitAt))
}

func decodeState(v []byte) (state.Entry, error) {
	switch {
	case len(v) == 1:
	case len(v) == 9:
	default:
		return state.Entry{}, fmt.Errorf("pebblestore: state value of %d bytes, want 1 or 9", len(v))
	}
	e := state.Entry{State: frontier.State(v[0])}
	if !e.State.Valid() {
		return state.Entry{}, fmt.Errorf("pebblestore: state value holds invalid %v", e.State)
	}
	if len(v) == 9 {
		e.RevisitAt = int64(binary.BigEndian.Uint64(v[1:]))
	}
	return e, nil
}

func bucket(score float64, buckets int) uint16 {
	b := min(int(score*float64(buckets)), buckets-1)
	return uint16(buckets - 1 - b)
}

func partitionPrefix(pfx byte, p int) []byte {
	return binary.BigEndian.AppendUint32([]byte{pfx}, uint32(p))
}

func readyKey(p int, b uint16, host string, fp []byte) []byte {
	k := make([]byte, 0, 1+4+2+len(host)+1+len(fp))
	k = append(k, pfxReady)
	k = binary.BigEndian.AppendUint32(k, uint32(p))
	k = binary.BigEndian.AppendUint16(k, b)
	k = append(k, host...)
	k = append(k, 0)
	return append(k, fp...)
}

// hostSkip returns the first key after every row of host in the bucket of key k (k's host part ends at sep).
func hostSkip(k []byte, sep int) []byte {
	s := append([]byte(nil), k[:sep]...)
	return append(s, 1)
}

// decodeReadyKey returns the partition, bucket, host, fingerprint and the index of the host's 0 separator.
func decodeReadyKey(k []byte) (p int, b uint16, host, fp []byte, sep int, err error) {
	if len(k) < 8 || k[0] != pfxReady {
		return 0, 0, nil, nil, 0, fmt.Errorf("pebblestore: queue key %x: too short or wrong prefix", k)
	}
	p = int(binary.BigEndian.Uint32(k[1:]))
	b = binary.BigEndian.Uint16(k[5:])
	rest := k[7:]
	i := indexByte(rest, 0)
	if i < 0 || i == len(rest)-1 {
		return 0, 0, nil, nil, 0, fmt.Errorf("pebblestore: queue key %x: no host separator or no fingerprint", k)
	}
	return p, b, rest[:i], rest[i+1:], 7 + i, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func delayedKey(p int, notBefore int64, fp []byte) []byte {
	k := make([]byte, 0, 1+4+8+len(fp))
	k = append(k, pfxDelayed)
	k = binary.BigEndian.AppendUint32(k, uint32(p))
	k = binary.BigEndian.AppendUint64(k, uint64(notBefore))
	return append(k, fp...)
}

func decodeDelayedKey(k []byte) (p int, notBefore int64, fp []byte, err error) {
	if len(k) < 14 || k[0] != pfxDelayed {
		return 0, 0, nil, fmt.Errorf("pebblestore: delayed key %x: too short or wrong prefix", k)
	}
	return int(binary.BigEndian.Uint32(k[1:])), int64(binary.BigEndian.Uint64(k[5:])), k[13:], nil
}

// keyPartition returns the partition of a q or w key.
func keyPartition(k []byte) (int, error) {
	if len(k) < 5 || (k[0] != pfxReady && k[0] != pfxDelayed) {
		return 0, fmt.Errorf("pebblestore: index points at key %x, not a queue row", k)
	}
	return int(binary.BigEndian.Uint32(k[1:])), nil
}

type queueValue struct {
	score     float64
	notBefore int64
	host      []byte
	request   []byte
}

func encodeQueueValue(score float64, notBefore int64, host string, req []byte) []byte {
	return appendQueueValue(make([]byte, 0, queueValueLen(host, req)), score, notBefore, host, req)
}

// queueValueLen is the encoded length of a queue value.
func queueValueLen(host string, req []byte) int {
	var tmp [binary.MaxVarintLen64]byte
	return 16 + binary.PutUvarint(tmp[:], uint64(len(host))) + len(host) + len(req)
}

func appendQueueValue(v []byte, score float64, notBefore int64, host string, req []byte) []byte {
	v = binary.BigEndian.AppendUint64(v, math.Float64bits(score))
	v = binary.BigEndian.AppendUint64(v, uint64(notBefore))
	v = binary.AppendUvarint(v, uint64(len(host)))
	v = append(v, host...)
	return append(v, req...)
}

var errShort = errors.New("truncated")

func decodeQueueValue(v []byte) (queueValue, error) {
	if len(v) < 17 {
		return queueValue{}, fmt.Errorf("pebblestore: queue value of %d bytes: %w", len(v), errShort)
	}
	q := queueValue{
		score:     math.Float64frombits(binary.BigEndian.Uint64(v)),
		notBefore: int64(binary.BigEndian.Uint64(v[8:])),
	}
	n, w := binary.Uvarint(v[16:])
	if w <= 0 || n > uint64(len(v)-16-w) {
		return queueValue{}, fmt.Errorf("pebblestore: queue value: host length: %w", errShort)
	}
	rest := v[16+w:]
	q.host, q.request = rest[:n], rest[n:]
	return q, nil
}

func countKey(p int) []byte { return partitionPrefix(pfxCount, p) }

func domainKey(name, domain string) []byte {
	k := make([]byte, 0, 2+len(name)+len(domain))
	k = append(k, pfxDomain)
	k = append(k, name...)
	k = append(k, 0)
	return append(k, domain...)
}

// markKey is the key of the highest Seq applied from source to counter name of domain: 'k' name 0 domain 0 source.
// Domain names and counter names never contain 0x00.
func markKey(name, domain, source string) []byte {
	k := make([]byte, 0, 3+len(name)+len(domain)+len(source))
	k = append(k, pfxMark)
	k = append(k, name...)
	k = append(k, 0)
	k = append(k, domain...)
	k = append(k, 0)
	return append(k, source...)
}

// Page records: a version byte, then the fields in Page order; integers as zig-zag varints, strings and byte
// slices as uvarint length + bytes. The fingerprint is the key and is not repeated.
const pageVersion = 1

func encodePage(p metadata.Page) []byte {
	return appendPage(make([]byte, 0, 64+len(p.URL)+len(p.ContentType)+len(p.Error)+len(p.RedirectTo)), p)
}

// appendPage appends the page record of p to v.
func appendPage(v []byte, p metadata.Page) []byte {
	v = append(v, pageVersion)
	v = appendString(v, p.URL)
	v = binary.AppendVarint(v, p.FirstSeen)
	v = binary.AppendVarint(v, p.LastFetched)
	v = binary.AppendVarint(v, int64(p.Status))
	v = binary.AppendVarint(v, int64(p.Depth))
	v = appendString(v, p.ContentType)
	v = appendString(v, p.Error)
	return appendBytes(v, p.RedirectTo)
}

func appendBytes(v, b []byte) []byte {
	return append(binary.AppendUvarint(v, uint64(len(b))), b...)
}

func appendString(v []byte, s string) []byte {
	return append(binary.AppendUvarint(v, uint64(len(s))), s...)
}

type pageReader struct {
	v   []byte
	err error
}

func (r *pageReader) varint(field string) int64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Varint(r.v)
	if n <= 0 {
		r.err = fmt.Errorf("pebblestore: page record: field %s: %w", field, errShort)
		return 0
	}
	r.v = r.v[n:]
	return x
}

func (r *pageReader) bytes(field string) []byte {
	if r.err != nil {
		return nil
	}
	n, w := binary.Uvarint(r.v)
	if w <= 0 || n > uint64(len(r.v)-w) {
		r.err = fmt.Errorf("pebblestore: page record: field %s: %w", field, errShort)
		return nil
	}
	b := r.v[w : w+int(n)]
	r.v = r.v[w+int(n):]
	return b
}

func decodePage(fp []byte, v []byte) (metadata.Page, error) {
	if len(v) == 0 || v[0] != pageVersion {
		return metadata.Page{}, fmt.Errorf("pebblestore: page record %x: unknown version", fp)
	}
	r := pageReader{v: v[1:]}
	p := metadata.Page{Fingerprint: append(frontier.Fingerprint(nil), fp...)}
	p.URL = string(r.bytes("url"))
	p.FirstSeen = r.varint("first_seen")
	p.LastFetched = r.varint("last_fetched")
	p.Status = int(r.varint("status"))
	p.Depth = int(r.varint("depth"))
	p.ContentType = string(r.bytes("content_type"))
	p.Error = string(r.bytes("error"))
	if rd := r.bytes("redirect_to"); len(rd) > 0 {
		p.RedirectTo = append(frontier.Fingerprint(nil), rd...)
	}
	if r.err == nil && len(r.v) != 0 {
		r.err = fmt.Errorf("pebblestore: page record %x: %d trailing bytes", fp, len(r.v))
	}
	if r.err != nil {
		return metadata.Page{}, r.err
	}
	return p, nil
}

// pageRec is a page record's fields as parsePageRecord reads them: the byte fields borrow the record.
type pageRec struct {
	url, contentType, errText, redirect   []byte
	firstSeen, lastFetched, status, depth int64
}

// parsePageRecord reads a page record without copying it (decodePage's checks, no allocation).
func parsePageRecord(v []byte) (pageRec, error) {
	if len(v) == 0 || v[0] != pageVersion {
		return pageRec{}, errors.New("pebblestore: page record: unknown version")
	}
	r := pageReader{v: v[1:]}
	var p pageRec
	p.url = r.bytes("url")
	p.firstSeen = r.varint("first_seen")
	p.lastFetched = r.varint("last_fetched")
	p.status = r.varint("status")
	p.depth = r.varint("depth")
	p.contentType = r.bytes("content_type")
	p.errText = r.bytes("error")
	p.redirect = r.bytes("redirect_to")
	if r.err == nil && len(r.v) != 0 {
		r.err = fmt.Errorf("pebblestore: page record: %d trailing bytes", len(r.v))
	}
	if r.err != nil {
		return pageRec{}, r.err
	}
	return p, nil
}

// appendMergedPage appends the record of metadata.Merge(old, p) to v, old being the stored record's fields (the
// zero pageRec when none is stored): byte for byte appendPage(v, metadata.Merge(decodePage(old), p)), without
// decoding the record into strings (TestMergeRecordsLikeMerge).
func appendMergedPage(v []byte, old *pageRec, p *metadata.Page) []byte {
	v = append(v, pageVersion)
	if p.URL != "" {
		v = appendString(v, p.URL)
	} else {
		v = appendBytes(v, old.url)
	}
	first := old.firstSeen
	if first == 0 {
		first = p.FirstSeen
	}
	v = binary.AppendVarint(v, first)
	v = binary.AppendVarint(v, pick(int64(p.LastFetched), old.lastFetched))
	v = binary.AppendVarint(v, pick(int64(p.Status), old.status))
	v = binary.AppendVarint(v, pick(int64(p.Depth), old.depth))
	if p.ContentType != "" {
		v = appendString(v, p.ContentType)
	} else {
		v = appendBytes(v, old.contentType)
	}
	if p.Error != "" {
		v = appendString(v, p.Error)
	} else {
		v = appendBytes(v, old.errText)
	}
	if len(p.RedirectTo) != 0 {
		return appendBytes(v, p.RedirectTo)
	}
	return appendBytes(v, old.redirect)
}

func pick(newer, older int64) int64 {
	if newer != 0 {
		return newer
	}
	return older
}
