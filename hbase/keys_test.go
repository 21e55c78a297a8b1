package hbase

import (
	"bytes"
	"encoding/hex"
	"math"
	"testing"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/state"
)

func TestQueueKeyLayout(t *testing.T) {
	fp := frontier.Fingerprint{0xAB, 0xCD}
	tests := []struct {
		partition int
		score     float64
		host      string
		want      string // hex
	}{
		{0, 1, "a.com", "0000" + "0000" + hex.EncodeToString([]byte("a.com")) + "00" + "abcd"},
		{1, 0, "a.com", "0001" + "03e8" + hex.EncodeToString([]byte("a.com")) + "00" + "abcd"},
		{258, 0.5, "", "0102" + "01f4" + "00" + "abcd"},
		{maxPartition, 0.9991, "h", "fffe" + "0000" + "68" + "00" + "abcd"},
	}
	for _, tc := range tests {
		k := queueKey(tc.partition, scoreBucket(tc.score, 1000), tc.host, fp)
		if got := hex.EncodeToString(k); got != tc.want {
			t.Errorf("queueKey(%d, %v, %q) = %s, want %s", tc.partition, tc.score, tc.host, got, tc.want)
		}
		p, _, host, gotFP, err := decodeQueueKey(k)
		if err != nil || p != tc.partition || host != tc.host || !gotFP.Equal(fp) {
			t.Errorf("decodeQueueKey(%x) = %d %q %x %v", k, p, host, gotFP, err)
		}
	}
}

// Better scores sort first; within a bucket, a host's rows are contiguous and hostEnd skips exactly them.
func TestQueueKeyOrder(t *testing.T) {
	fp := frontier.Fingerprint{1}
	k := func(score float64, host string, fp frontier.Fingerprint) []byte {
		return queueKey(3, scoreBucket(score, 1000), host, fp)
	}
	ordered := [][]byte{
		k(1, "z.com", fp),
		k(0.9, "a.com", fp),
		k(0.9, "a.com", frontier.Fingerprint{0xFF, 0xFF}),
		k(0.9, "a.com.evil", fp), // a longer host with the same prefix sorts after every a.com row
		k(0.9, "b.com", fp),
		k(0.5, "a.com", fp),
		k(0, "a.com", fp),
	}
	for i := 1; i < len(ordered); i++ {
		if bytes.Compare(ordered[i-1], ordered[i]) >= 0 {
			t.Errorf("key %d (%x) does not sort before key %d (%x)", i-1, ordered[i-1], i, ordered[i])
		}
	}
	end := hostEnd(ordered[1])
	if bytes.Compare(end, ordered[2]) <= 0 || bytes.Compare(end, ordered[3]) > 0 {
		t.Errorf("hostEnd(%x) = %x, want after every a.com row and not after a.com.evil", ordered[1], end)
	}
	if bytes.Compare(partitionEnd(3), k(0, "\xff", fp)) <= 0 || bytes.Compare(partitionPrefix(3), ordered[0]) > 0 {
		t.Error("partition range does not hold the partition's keys")
	}
	if bytes.Compare(partitionEnd(maxPartition), indexKey(fp)) > 0 {
		t.Error("the index sorts inside the last partition")
	}
}

func TestScoreBucket(t *testing.T) {
	for _, tc := range []struct {
		score   float64
		buckets int
		want    uint16
	}{
		{1, 1000, 0}, {0.9995, 1000, 0}, {0.999, 1000, 1}, {0.5, 1000, 500}, {0, 1000, 1000},
		{0, 65535, 65535}, {1, 1, 0}, {0.25, 100, 75},
	} {
		if got := scoreBucket(tc.score, tc.buckets); got != tc.want {
			t.Errorf("scoreBucket(%v, %d) = %d, want %d", tc.score, tc.buckets, got, tc.want)
		}
	}
}

func TestDecodeQueueKeyErrors(t *testing.T) {
	for _, k := range []string{"", "0001", "00010000", "0001000061", "000100006100", "ffff0000610001"} {
		b, _ := hex.DecodeString(k)
		if _, _, _, _, err := decodeQueueKey(b); err == nil {
			t.Errorf("decodeQueueKey(%s): no error", k)
		}
	}
}

func TestQueueValue(t *testing.T) {
	v := queueValue(0.375, 1_700_000_000, []byte("req"))
	s, nb, req, err := decodeQueueValue(v)
	if err != nil || s != 0.375 || nb != 1_700_000_000 || string(req) != "req" {
		t.Fatalf("round trip: %v %v %q %v", s, nb, req, err)
	}
	for _, bad := range [][]byte{nil, make([]byte, 15), queueValue(math.NaN(), 0, nil), queueValue(2, 0, nil)} {
		if _, _, _, err := decodeQueueValue(bad); err == nil {
			t.Errorf("decodeQueueValue(%x): no error", bad)
		}
	}
}

func TestStateValue(t *testing.T) {
	for _, e := range []state.Entry{{}, {State: frontier.Crawled}, {State: frontier.Queued, RevisitAt: 1 << 40}, {State: frontier.Error, RevisitAt: -1}} {
		v := stateValue(e)
		got, err := decodeStateValue(v)
		if err != nil || got != e {
			t.Errorf("round trip of %+v via %x: %+v, %v", e, v, got, err)
		}
	}
	if v := stateValue(state.Entry{State: frontier.Crawled}); len(v) != 1 {
		t.Errorf("an entry without revisit time takes %d bytes, want 1", len(v))
	}
	for _, bad := range []string{"", "0203", "09", "02000000000000000000"} {
		b, _ := hex.DecodeString(bad)
		if _, err := decodeStateValue(b); err == nil {
			t.Errorf("decodeStateValue(%s): no error", bad)
		}
	}
}

func FuzzDecodeQueueKey(f *testing.F) {
	f.Add(queueKey(1, 500, "a.com", frontier.Fingerprint{1, 2, 3}))
	f.Add([]byte{0xFF, 0xFF, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 'a'})
	f.Fuzz(func(t *testing.T, k []byte) {
		p, b, host, fp, err := decodeQueueKey(k)
		if err != nil {
			return
		}
		if again := queueKey(p, b, host, fp); !bytes.Equal(again, k) {
			t.Fatalf("decode(%x) = %d %d %q %x re-encodes to %x", k, p, b, host, fp, again)
		}
	})
}

func FuzzDecodeValues(f *testing.F) {
	f.Add(queueValue(0.5, 10, []byte("r")))
	f.Add(stateValue(state.Entry{State: frontier.Crawled, RevisitAt: 5}))
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, v []byte) {
		if s, nb, req, err := decodeQueueValue(v); err == nil {
			if !bytes.Equal(queueValue(s, nb, req), v) {
				t.Fatalf("queue value %x does not round-trip", v)
			}
		}
		if e, err := decodeStateValue(v); err == nil && !bytes.Equal(stateValue(e), v) && !(len(v) == 9 && e.RevisitAt == 0) {
			t.Fatalf("state value %x does not round-trip", v)
		}
		_, _ = counterValue(v)
	})
}
