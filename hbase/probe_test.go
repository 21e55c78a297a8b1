package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// Hand-written binary-protocol replies, independent of the generated code under test.
const (
	tStop, tBool, tI32, tString, tStruct, tMap, tList = 0, 2, 8, 11, 12, 13, 15
	replyHeader                                       = 0x80010002 // version 1, message type reply
)

func pstr(s string) []byte { return binary.BigEndian.AppendUint32([]byte(nil), uint32(len(s))) }
func pfield(typ byte, id int16) []byte {
	return binary.BigEndian.AppendUint16([]byte{typ}, uint16(id))
}
func pi32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func pcat(ps ...[]byte) []byte {
	return bytes.Join(ps, nil)
}
func pstring(s string) []byte { return append(pstr(s), s...) }

// preply is a reply message to method with sequence id seq and the given result struct body.
func preply(method string, seq int32, body ...[]byte) []byte {
	return pcat(binary.BigEndian.AppendUint32(nil, replyHeader), pstring(method), pi32(seq), pcat(body...))
}

func namespaces(seq int32, ns ...string) []byte {
	body := pcat(pfield(tList, 0), []byte{tString}, pi32(int32(len(ns))))
	for _, n := range ns {
		body = append(body, pstring(n)...)
	}
	return preply("listNamespaces", seq, body, []byte{tStop})
}

// probeOver runs a probe against a fake gateway on a pipe that answers each call with reply(method, seq);
// a nil reply hangs up, and so does every reply with once.
func probeOver(t testing.TB, once bool, reply func(method string, seq int32) []byte) ([]string, error) {
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		for {
			var hdr [4]byte
			if _, err := io.ReadFull(server, hdr[:]); err != nil {
				return
			}
			p := make([]byte, binary.BigEndian.Uint32(hdr[:]))
			if _, err := io.ReadFull(server, p); err != nil || len(p) < 8 {
				return
			}
			n := int(binary.BigEndian.Uint32(p[4:]))
			if n < 0 || 8+n+4 > len(p) {
				return
			}
			out := reply(string(p[8:8+n]), int32(binary.BigEndian.Uint32(p[8+n:])))
			if out == nil {
				return
			}
			if _, err := server.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(out))), out...)); err != nil || once {
				return
			}
		}
	}()
	// A reply that ends inside its frame leaves the decoder waiting for the next frame until the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cfg := DefaultConfig()
	return probe(ctx, cfg, func(context.Context) (*conn, error) { return newConn(client, cfg), nil })
}

func TestProbe(t *testing.T) {
	ready := func(m string, seq int32) []byte {
		if m == "listNamespaces" {
			return namespaces(seq, "default", "hbase")
		}
		return preply(m, seq, pfield(tBool, 0), []byte{0}, []byte{tStop})
	}
	ns, err := probeOver(t, false, ready)
	if err != nil || strings.Join(ns, ",") != "default,hbase" {
		t.Fatalf("probe = %v, %v; want [default hbase]", ns, err)
	}
	ioError := pcat(pfield(tStruct, 1), pfield(tString, 1), pstring("PleaseHoldException: Master is initializing"), []byte{tStop}, []byte{tStop})
	for _, tc := range []struct {
		name  string
		reply func(string, int32) []byte
		want  string
	}{
		{"master initializing", func(m string, seq int32) []byte { return preply(m, seq, ioError) },
			"listNamespaces: TIOError: PleaseHoldException: Master is initializing"},
		{"no system namespace", func(m string, seq int32) []byte { return namespaces(seq, "default") }, `want the system namespace "hbase"`},
		{"hang up", func(string, int32) []byte { return nil }, "listNamespaces: "},
		// Malformed replies are errors, never a result.
		{"neither value nor exception", func(m string, seq int32) []byte { return preply(m, seq, []byte{tStop}) }, "listNamespaces: "},
		{"list of i32", func(m string, seq int32) []byte {
			return preply(m, seq, pfield(tList, 0), []byte{tI32}, pi32(1), pi32(5), []byte{tStop})
		}, "listNamespaces: "},
		{"not a list", func(m string, seq int32) []byte { return preply(m, seq, pfield(tI32, 0), pi32(5), []byte{tStop}) }, "listNamespaces: "},
		{"list size beyond message", func(m string, seq int32) []byte {
			return preply(m, seq, pfield(tList, 0), []byte{tString}, pi32(1<<30))
		}, "listNamespaces: "},
		{"negative list size", func(m string, seq int32) []byte {
			return preply(m, seq, pfield(tList, 0), []byte{tString}, pi32(-1))
		}, "listNamespaces: "},
		{"exception field that is no struct", func(m string, seq int32) []byte {
			return preply(m, seq, pfield(tI32, 1), pi32(5), []byte{tStop})
		}, "listNamespaces: "},
		{"unknown type", func(m string, seq int32) []byte {
			return preply(m, seq, pfield(tStruct, 1), pfield(99, 3), []byte{tStop})
		}, "listNamespaces: "},
		{"empty reply", func(string, int32) []byte { return []byte{} }, "listNamespaces: "},
		{"meta not online", func(m string, seq int32) []byte {
			if m == "listNamespaces" {
				return namespaces(seq, "default", "hbase")
			}
			return preply(m, seq, pcat(pfield(tStruct, 1), pfield(tString, 1), pstring("NotServingRegionException: hbase:meta,,1"), []byte{tStop}, []byte{tStop}))
		}, "exists on hbase:meta: TIOError: NotServingRegionException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := probeOver(t, false, tc.reply)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("probe = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// FuzzProbeReply answers the probe's calls with arbitrary bytes: the generated decoder must return an error or
// a result, never panic or hang on a corrupt size.
func FuzzProbeReply(f *testing.F) {
	f.Add(namespaces(1, "default", "hbase"))
	f.Add(preply("listNamespaces", 1, pfield(tStruct, 1), pfield(tString, 1), pstring("Master is initializing"), []byte{tStop}, []byte{tStop}))
	f.Add(preply("listNamespaces", 1, pfield(tStruct, 2), pfield(tMap, 7), []byte{tString, tList}, pi32(1), pstring("k"), []byte{10}, pi32(2), make([]byte, 16), []byte{tStop}, []byte{tStop}))
	f.Add(pcat(pi32(14), []byte("listNamespaces")))
	f.Fuzz(func(t *testing.T, payload []byte) {
		_, _ = probeOver(t, true, func(string, int32) []byte { return payload })
	})
}
