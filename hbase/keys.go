package hbase

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/state"
)

// Column families and qualifiers. One-letter names: HBase stores them in every cell.
var (
	famState  = []byte("s")
	qualState = []byte("s")

	famQueue  = []byte("q")
	qualQueue = []byte("v") // queue row: score | not-before | request
	qualIndex = []byte("k") // index row: the queue row key
	qualPrev  = []byte("p") // index row: the queue row key the current one replaced

	famMeta = []byte("m")
)

// maxPartition is the largest spider partition the queue's 2-byte partition prefix holds; 0xFFFF prefixes the
// fingerprint index.
const maxPartition = 0xFFFE

var indexPrefix = []byte{0xFF, 0xFF}

// queueKey is partition(2, big-endian) | inverted score bucket(2) | host | 0x00 | fingerprint.
func queueKey(partition int, bucket uint16, host string, fp frontier.Fingerprint) []byte {
	k := make([]byte, 0, 5+len(host)+len(fp))
	k = binary.BigEndian.AppendUint16(k, uint16(partition))
	k = binary.BigEndian.AppendUint16(k, bucket)
	k = append(k, host...)
	k = append(k, 0)
	return append(k, fp...)
}

// scoreBucket maps a score in [0, 1] to its inverted bucket: 0 for the best scores, buckets for score 0.
func scoreBucket(score float64, buckets int) uint16 {
	b := math.Floor((1 - score) * float64(buckets))
	return uint16(max(0, min(b, float64(buckets))))
}

// partitionPrefix is the first key of a partition's rows; partitionEnd the first key after them.
func partitionPrefix(p int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(p)) }
func partitionEnd(p int) []byte    { return binary.BigEndian.AppendUint16(nil, uint16(p+1)) }

// hostEnd is the first key after every row of host in the same partition and bucket as key k.
func hostEnd(k []byte) []byte {
	i := bytes.IndexByte(k[4:], 0)
	out := append([]byte(nil), k[:4+i]...)
	return append(out, 1)
}

// decodeQueueKey splits a queue row key.
func decodeQueueKey(k []byte) (partition int, bucket uint16, host string, fp frontier.Fingerprint, err error) {
	if len(k) < 6 {
		return 0, 0, "", nil, fmt.Errorf("queue row key %x: %d bytes, want at least 6", k, len(k))
	}
	partition = int(binary.BigEndian.Uint16(k))
	if partition > maxPartition {
		return 0, 0, "", nil, fmt.Errorf("queue row key %x: partition %d is the index prefix", k, partition)
	}
	bucket = binary.BigEndian.Uint16(k[2:])
	i := bytes.IndexByte(k[4:], 0)
	if i < 0 {
		return 0, 0, "", nil, fmt.Errorf("queue row key %x: no host terminator", k)
	}
	fp = frontier.Fingerprint(bytes.Clone(k[4+i+1:]))
	if len(fp) == 0 {
		return 0, 0, "", nil, fmt.Errorf("queue row key %x: no fingerprint", k)
	}
	return partition, bucket, string(k[4 : 4+i]), fp, nil
}

func indexKey(fp frontier.Fingerprint) []byte {
	return append(bytes.Clone(indexPrefix), fp...)
}

// queueValue is score(float64 bits, 8) | not-before(int64, 8) | request.
func queueValue(score float64, notBefore int64, req []byte) []byte {
	v := make([]byte, 16, 16+len(req))
	binary.BigEndian.PutUint64(v, math.Float64bits(score))
	binary.BigEndian.PutUint64(v[8:], uint64(notBefore))
	return append(v, req...)
}

func decodeQueueValue(v []byte) (score float64, notBefore int64, req []byte, err error) {
	if len(v) < 16 {
		return 0, 0, nil, fmt.Errorf("queue value of %d bytes, want at least 16", len(v))
	}
	score = math.Float64frombits(binary.BigEndian.Uint64(v))
	if !(score >= 0 && score <= 1) {
		return 0, 0, nil, fmt.Errorf("queue value holds score %v outside [0, 1]", score)
	}
	return score, int64(binary.BigEndian.Uint64(v[8:])), bytes.Clone(v[16:]), nil
}

// stateValue is the state byte, followed by the revisit time (int64, 8) when it is set.
func stateValue(e state.Entry) []byte {
	if e.RevisitAt == 0 {
		return []byte{byte(e.State)}
	}
	return binary.BigEndian.AppendUint64([]byte{byte(e.State)}, uint64(e.RevisitAt))
}

var errStateValue = errors.New("want 1 or 9 bytes")

func decodeStateValue(v []byte) (state.Entry, error) {
	if len(v) > 0 && !frontier.State(v[0]).Valid() {
		return state.Entry{}, fmt.Errorf("state value %x: invalid state %d", v, v[0])
	}
	switch len(v) {
	case 1:
		return state.Entry{State: frontier.State(v[0])}, nil
	case 9:
		return state.Entry{State: frontier.State(v[0]), RevisitAt: int64(binary.BigEndian.Uint64(v[1:]))}, nil
	}
	return state.Entry{}, fmt.Errorf("state value %x: %w", v, errStateValue)
}
