package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// The fake gateway below speaks Thrift's binary protocol (strict, versioned messages) over the framed
// transport by hand, so that the probe, which uses the generated client of package hbase, is tested against
// bytes written independently of it.

// Thrift binary-protocol type ids and message types.
const (
	tStop   byte = 0
	tBool   byte = 2
	tI32    byte = 8
	tI64    byte = 10
	tString byte = 11
	tStruct byte = 12
	tMap    byte = 13
	tList   byte = 15

	msgCall      = 1
	msgReply     = 2
	msgException = 3

	version1 = 0x80010000
)

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendFieldHeader(b []byte, typ byte, id int16) []byte {
	b = append(b, typ)
	return binary.BigEndian.AppendUint16(b, uint16(id))
}

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
					if len(p) < 8 || binary.BigEndian.Uint32(p) != version1|msgCall {
						return
					}
					n := int(binary.BigEndian.Uint32(p[4:]))
					if n < 0 || 8+n+4 > len(p) {
						return
					}
					name, seq := string(p[8:8+n]), int32(binary.BigEndian.Uint32(p[8+n:]))
					out := reply(name, seq, p[8+n+4:])
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
