package codec

import (
	"bytes"
	"testing"

	frontier "github.com/frontiercrawl/frontier"
)

// kept is a message decoded earlier through a MsgpackDecoder, with what it must still encode to.
type kept struct {
	name string
	m    frontier.Message
	want []byte // Msgpack.DecodeMessage's result, re-encoded
}

// decodeKept decodes data through dec with s (borrowing a copy of data, which it then leaves alone), checks the
// result against Msgpack.DecodeMessage's (the same error; the same re-encoding, skimmed as s says) and, if it
// decoded, appends it to *ks.
func decodeKept(t *testing.T, dec *MsgpackDecoder, name string, data []byte, s Skim, ks *[]kept) {
	t.Helper()
	full, ferr := Msgpack{}.DecodeMessage(data)
	got, err := dec.DecodeMessageSkim(bytes.Clone(data), s)
	if (err == nil) != (ferr == nil) || (err != nil && err.Error() != ferr.Error()) {
		t.Fatalf("%s: error %v, want %v", name, err, ferr)
	}
	if err != nil {
		return
	}
	want, err := Msgpack{}.EncodeMessage(skimmed(full, s))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := Msgpack{}.EncodeMessage(got)
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("%s: re-encodings differ (%v): %s", name, err, firstDiff(b, want))
	}
	*ks = append(*ks, kept{name, got, want})
}

// checkKept re-encodes every kept message: a later decode through the same MsgpackDecoder (whose slabs carry
// over from message to message) must not have written into any of them.
func checkKept(t *testing.T, ks []kept) {
	t.Helper()
	for _, k := range ks {
		b, err := Msgpack{}.EncodeMessage(k.m)
		if err != nil || !bytes.Equal(b, k.want) {
			t.Fatalf("%s changed after later decodes (%v): %s", k.name, err, firstDiff(b, k.want))
		}
	}
}

// TestMsgpackDecoderSlabsKeepEarlierMessages decodes Frontera's vectors and the skim messages, whole and skimmed,
// one after another through one MsgpackDecoder, keeping every message, then checks each still equals the full
// decoder's: the slabs a MsgpackDecoder carries over never overwrite a value handed out before.
func TestMsgpackDecoderSlabsKeepEarlierMessages(t *testing.T) {
	dec := NewMsgpackDecoder()
	var ks []kept
	for range 2 {
		for _, v := range loadVectors(t) {
			if v.kind == "feed" {
				continue
			}
			decodeKept(t, dec, v.Name, v.mp, Skim{}, &ks)
			decodeKept(t, dec, v.Name+" (skim)", v.mp, skimTest, &ks)
		}
		for _, m := range append(skimMessages(), sharedDomainLinks()) {
			data, err := Msgpack{}.EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			decodeKept(t, dec, m.Name(), data, Skim{}, &ks)
			decodeKept(t, dec, m.Name()+" (skim)", data, skimTest, &ks)
			decodeKept(t, dec, m.Name()+" (cut)", data[:len(data)/2], Skim{}, &ks) // an error midway leaves the slabs sound
		}
	}
	checkKept(t, ks)
	if len(ks) < 100 {
		t.Errorf("only %d messages decoded", len(ks))
	}
}

// FuzzMsgpackDecoderSlabs holds a MsgpackDecoder that decodes every input (its slabs carried over from one to the
// next) to Msgpack.DecodeMessage, whole and skimmed, and checks that decoding an input three times over leaves
// the first two results as they were.
//
//	go test -run '^$' -fuzz FuzzMsgpackDecoderSlabs -fuzztime 30s ./codec/
func FuzzMsgpackDecoderSlabs(f *testing.F) {
	for _, m := range append(skimMessages(), sharedDomainLinks()) {
		f.Add(mustEncodeMessage(f, m))
	}
	dec := NewMsgpackDecoder()
	f.Fuzz(func(t *testing.T, data []byte) {
		var ks []kept
		decodeKept(t, dec, "whole", data, Skim{}, &ks)
		decodeKept(t, dec, "skim", data, skimTest, &ks)
		decodeKept(t, dec, "borrow", data, Skim{Borrow: true}, &ks)
		checkKept(t, ks)
	})
}
