package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// msg builds a binary-protocol message: header, then body.
func msg(typ uint32, name string, seq int32, body ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, version1|typ)
	b = appendString(b, name)
	b = binary.BigEndian.AppendUint32(b, uint32(seq))
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

func i32(v int32) []byte  { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func str(s string) []byte { return appendString(nil, s) }
func field(typ byte, id int16) []byte {
	return appendFieldHeader(nil, typ, id)
}
func cat(ps ...[]byte) []byte { return bytes.Join(ps, nil) }

// namespacesReply is listNamespaces' result: field 0 list<string>.
func namespacesReply(seq int32, ns ...string) []byte {
	body := cat(field(tList, 0), []byte{tString}, i32(int32(len(ns))))
	for _, n := range ns {
		body = append(body, str(n)...)
	}
	return msg(msgReply, "listNamespaces", seq, body, []byte{tStop})
}

func ioErrorReply(method string, seq int32, text string) []byte {
	return msg(msgReply, method, seq, field(tStruct, 1), field(tString, 1), str(text), field(tBool, 2), []byte{1}, []byte{tStop}, []byte{tStop})
}

func existsReply(seq int32, v bool) []byte {
	b := byte(0)
	if v {
		b = 1
	}
	return msg(msgReply, "exists", seq, field(tBool, 0), []byte{b}, []byte{tStop})
}

func TestDecodeReplyHeader(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
		method  string
		seq     int32
		wantErr string // "" = success
	}{
		{"reply", namespacesReply(1, "default", "hbase"), "listNamespaces", 1, ""},
		{"empty", nil, "listNamespaces", 1, "reply header: thrift: message ends early"},
		{"old unversioned message", cat(i32(14), []byte("listNamespaces"), []byte{msgReply}), "listNamespaces", 1, "not a strict binary-protocol message"},
		{"wrong method", namespacesReply(1), "exists", 1, `reply is for method "listNamespaces", want "exists"`},
		{"wrong sequence id", namespacesReply(7), "listNamespaces", 1, "sequence id 7, want 1"},
		{"call instead of reply", msg(msgCall, "listNamespaces", 1), "listNamespaces", 1, "message type 1"},
		{"application exception", msg(msgException, "listNamespaces", 1, field(tString, 1), str("Invalid method name"), field(tI32, 2), i32(1), []byte{tStop}), "listNamespaces", 1, "TApplicationException: Invalid method name"},
		{"name longer than message", cat(u32(version1|msgReply), i32(1000), []byte("ab")), "listNamespaces", 1, "reply method name: thrift: message ends early"},
		{"negative name length", cat(u32(version1|msgReply), i32(-5)), "listNamespaces", 1, "negative length -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeReply(tt.payload, tt.method, tt.seq)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("decodeReply: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("decodeReply = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestResult(t *testing.T) {
	decodeNS := func(payload []byte) ([]string, error) {
		r, err := decodeReply(payload, "listNamespaces", 1)
		if err != nil {
			return nil, err
		}
		var ns []string
		err = r.result(hbaseExceptions, func(r *reader, typ byte) error {
			ns, err = r.stringList(typ)
			return err
		})
		return ns, err
	}
	ns, err := decodeNS(namespacesReply(1, "default", "hbase"))
	if err != nil || strings.Join(ns, ",") != "default,hbase" {
		t.Fatalf("namespaces = %v, %v; want [default hbase]", ns, err)
	}

	_, err = decodeNS(ioErrorReply("listNamespaces", 1, "org.apache.hadoop.hbase.PleaseHoldException: Master is initializing"))
	var te *thriftError
	if !errors.As(err, &te) || te.Kind != "TIOError" || !strings.Contains(te.Message, "Master is initializing") {
		t.Fatalf("err = %v, want a TIOError saying the master is initializing", err)
	}

	tests := []struct {
		name    string
		body    []byte
		wantErr string
	}{
		{"neither value nor exception", []byte{tStop}, "neither a value nor an exception"},
		{"list of i32", cat(field(tList, 0), []byte{tI32}, i32(1), i32(5), []byte{tStop}), "want strings"},
		{"not a list", cat(field(tI32, 0), i32(5), []byte{tStop}), "want a list"},
		{"list size beyond message", cat(field(tList, 0), []byte{tString}, i32(1<<30)), "does not fit"},
		{"negative list size", cat(field(tList, 0), []byte{tString}, i32(-1)), "does not fit"},
		{"exception field that is no struct", cat(field(tI32, 1), i32(5), []byte{tStop}), "want a struct"},
		{"undeclared exception id", cat(field(tStruct, 9), field(tString, 1), str("boom"), []byte{tStop}, []byte{tStop}), "exception field 9: boom"},
		{"exception with unknown extra fields", cat(field(tStruct, 2), field(tMap, 7), []byte{tString, tI64}, i32(1), str("k"), make([]byte, 8), field(tString, 1), str("bad arg"), []byte{tStop}, []byte{tStop}), "TIllegalArgument: bad arg"},
		{"exception with unknown type", cat(field(tStruct, 1), field(99, 3), []byte{tStop}), "unknown type id 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeNS(msg(msgReply, "listNamespaces", 1, tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestSkipDepthLimit(t *testing.T) {
	// A struct nested far deeper than maxDepth must be rejected, not recursed into.
	var b []byte
	for range 1000 {
		b = append(b, field(tStruct, 1)...)
	}
	r := &reader{b: b}
	if err := r.skip(tStruct, 0); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("skip = %v, want a depth error", err)
	}
}

// fakeHBase serves framed binary Thrift on a loopback port: it answers each call with reply(name, seq).
func fakeHBase(t *testing.T, reply func(method string, seq int32, args []byte) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					var hdr [4]byte
					if _, err := io.ReadFull(br, hdr[:]); err != nil {
						return
					}
					p := make([]byte, binary.BigEndian.Uint32(hdr[:]))
					if _, err := io.ReadFull(br, p); err != nil {
						return
					}
					r := &reader{b: p}
					v, _ := r.i32()
					name, _ := r.bin()
					seq, _ := r.i32()
					if uint32(v) != version1|msgCall {
						return
					}
					out := reply(string(name), seq, p[r.off:])
					if out == nil {
						return
					}
					frame := binary.BigEndian.AppendUint32(nil, uint32(len(out)))
					if _, err := c.Write(append(frame, out...)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestProbeHBase(t *testing.T) {
	wantExistsArgs := cat(field(tString, 1), str("hbase:meta"), field(tStruct, 2), field(tString, 1), str("frontier-probe"), []byte{tStop}, []byte{tStop})
	tests := []struct {
		name    string
		reply   func(method string, seq int32, args []byte) []byte
		wantErr string
	}{
		{"ready", func(m string, seq int32, args []byte) []byte {
			if m == "exists" && !bytes.Equal(args, wantExistsArgs) {
				return nil // wrong encoding: hang up
			}
			if m == "listNamespaces" {
				return namespacesReply(seq, "default", "hbase")
			}
			return existsReply(seq, false)
		}, ""},
		{"master initializing", func(m string, seq int32, _ []byte) []byte {
			return ioErrorReply(m, seq, "PleaseHoldException: Master is initializing")
		}, "listNamespaces: TIOError: PleaseHoldException: Master is initializing"},
		{"meta not online", func(m string, seq int32, _ []byte) []byte {
			if m == "listNamespaces" {
				return namespacesReply(seq, "default", "hbase")
			}
			return ioErrorReply(m, seq, "NotServingRegionException: hbase:meta,,1")
		}, "exists on hbase:meta: TIOError: NotServingRegionException"},
		{"no system namespace", func(m string, seq int32, _ []byte) []byte {
			return namespacesReply(seq, "default")
		}, `want the system namespace "hbase"`},
		{"hang up", func(string, int32, []byte) []byte { return nil }, "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := fakeHBase(t, tt.reply)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			ns, err := probeHBase(ctx, addr)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("probeHBase: %v", err)
				}
				if strings.Join(ns, ",") != "default,hbase" {
					t.Errorf("namespaces = %v", ns)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("probeHBase = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestProbeHBaseOversizedFrame(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// An HTTP server, say, answering a Thrift client.
		_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = probeHBase(ctx, ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "is the server framed binary Thrift?") {
		t.Fatalf("probeHBase = %v, want a frame-size error", err)
	}
}

// FuzzDecodeReply feeds arbitrary replies to the decoder: it must return an error or a result, never panic or
// loop on a corrupt size.
func FuzzDecodeReply(f *testing.F) {
	f.Add(namespacesReply(1, "default", "hbase"))
	f.Add(ioErrorReply("listNamespaces", 1, "Master is initializing"))
	f.Add(msg(msgException, "listNamespaces", 1, field(tString, 1), str("Invalid method name"), []byte{tStop}))
	f.Add(msg(msgReply, "listNamespaces", 1, field(tStruct, 2), field(tMap, 7), []byte{tString, tList}, i32(1), str("k"), []byte{tI64}, i32(2), make([]byte, 16), []byte{tStop}, []byte{tStop}))
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := decodeReply(payload, "listNamespaces", 1)
		if err != nil {
			return
		}
		_ = r.result(hbaseExceptions, func(r *reader, typ byte) error {
			_, err := r.stringList(typ)
			return err
		})
		r2 := &reader{b: payload}
		for r2.off < len(payload) {
			ft, _, err := r2.fieldHeader()
			if err != nil || ft == tStop || r2.skip(ft, 0) != nil {
				break
			}
		}
	})
}
