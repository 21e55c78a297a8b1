package urlfrontier

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// record is the stored state of one URL (the value of its u key).
type record struct {
	refetch int64 // epoch seconds the client gave (discovery time for a discovered URL); 0 = done
	sched   int64 // unix ms of its s key; 0 = not scheduled (done)
	created int64 // epoch seconds
	lease   int64 // unix ms the lease ends (its l key); 0 = never leased since the last put
	meta    map[string][]string
	// The feed request the URL came from (a Gateway's; empty in a Store filled by clients only): its encoded
	// bytes, which a known put repeats in its page_crawled, and its spider-feed partition and offset + 1, which
	// tell a replay of the same feed entry (skipped) from a new one (a revisit or a retry: queued again).
	src  []byte
	part int32
	off  int64
}

// Record versions: 1 holds no feed request; 2 appends src, part and off.
const (
	recordVersion  = 1
	recordVersion2 = 2
)

func (r *record) done() bool { return r.sched == 0 }

func (r *record) encode(b []byte) []byte {
	v := byte(recordVersion)
	if len(r.src) > 0 || r.off != 0 || r.part != 0 {
		v = recordVersion2
	}
	b = append(b, v)
	b = binary.AppendVarint(b, r.refetch)
	b = binary.AppendVarint(b, r.sched)
	b = binary.AppendVarint(b, r.created)
	b = binary.AppendVarint(b, r.lease)
	b = binary.AppendUvarint(b, uint64(len(r.meta)))
	for k, vs := range r.meta {
		b = appendString(b, k)
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = appendString(b, v)
		}
	}
	if v == recordVersion2 {
		b = binary.AppendUvarint(b, uint64(len(r.src)))
		b = append(b, r.src...)
		b = binary.AppendVarint(b, int64(r.part))
		b = binary.AppendVarint(b, r.off)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errShort = errors.New("truncated")

// decodeRecord parses a u value; an error names what is wrong.
func decodeRecord(b []byte) (record, error) {
	var r record
	d := decoder{b: b}
	v := d.byte()
	if d.err == nil && v != recordVersion && v != recordVersion2 {
		return r, fmt.Errorf("urlfrontier: URL record version %d, want %d or %d", v, recordVersion, recordVersion2)
	}
	r.refetch, r.sched, r.created, r.lease = d.varint(), d.varint(), d.varint(), d.varint()
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%d metadata keys in %d bytes", n, len(d.b))
	}
	if n > 0 && d.err == nil {
		r.meta = make(map[string][]string, n)
		for range n {
			k := d.string()
			m := d.uvarint()
			if d.err == nil && m > uint64(len(d.b)) {
				d.err = fmt.Errorf("%d values in %d bytes", m, len(d.b))
			}
			if d.err != nil {
				break
			}
			vs := make([]string, 0, m)
			for range m {
				vs = append(vs, d.string())
			}
			r.meta[k] = vs
		}
	}
	if v == recordVersion2 && d.err == nil {
		if src := d.string(); src != "" {
			r.src = []byte(src)
		}
		r.part = int32(d.varint())
		r.off = d.varint()
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return record{}, fmt.Errorf("urlfrontier: URL record: %w", d.err)
	}
	return r, nil
}

// queueRecord is the stored state of one queue (the value of its q key).
type queueRecord struct {
	delay     int64 // seconds; -1 = the default
	blocked   int64 // epoch seconds it is blocked until; 0 = not blocked
	limit     uint64
	completed uint64 // URLs done
	active    uint64 // URLs not done (queued or leased)
	lastSent  int64  // unix ms of the last GetURLs that took URLs from it
}

func (q *queueRecord) encode(b []byte) []byte {
	b = append(b, recordVersion)
	b = binary.AppendVarint(b, q.delay)
	b = binary.AppendVarint(b, q.blocked)
	b = binary.AppendUvarint(b, q.limit)
	b = binary.AppendUvarint(b, q.completed)
	b = binary.AppendUvarint(b, q.active)
	return binary.AppendVarint(b, q.lastSent)
}

func decodeQueueRecord(b []byte) (queueRecord, error) {
	var q queueRecord
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != recordVersion {
		return q, fmt.Errorf("urlfrontier: queue record version %d, want %d", v, recordVersion)
	}
	q.delay, q.blocked = d.varint(), d.varint()
	q.limit, q.completed, q.active = d.uvarint(), d.uvarint(), d.uvarint()
	q.lastSent = d.varint()
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return queueRecord{}, fmt.Errorf("urlfrontier: queue record: %w", d.err)
	}
	return q, nil
}

// decoder reads varints and strings, keeping the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = errShort
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
