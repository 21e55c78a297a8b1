package main

// A minimal client for two calls of HBase's Thrift2 service (THBaseService in hbase-thrift's
// thrift2/hbase.thrift), enough to tell that the gateway, the master and the region server holding hbase:meta
// all answer: listNamespaces() and exists("hbase:meta", TGet{row}). Binary protocol (strict, versioned
// messages) over the framed transport, the way deploy/up starts the gateway. It uses only the standard
// library: the real HBase client (and the Thrift library) belongs to the hbase package.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// Thrift binary-protocol type ids and message types.
const (
	tStop   byte = 0
	tBool   byte = 2
	tByte   byte = 3
	tDouble byte = 4
	tI16    byte = 6
	tI32    byte = 8
	tI64    byte = 10
	tString byte = 11
	tStruct byte = 12
	tMap    byte = 13
	tSet    byte = 14
	tList   byte = 15

	msgCall      = 1
	msgReply     = 2
	msgException = 3

	versionMask = 0xffff0000
	version1    = 0x80010000

	maxFrame = 16 << 20 // replies to these calls are tiny; anything bigger is not our server
	maxDepth = 32
)

// thriftError is an exception a call declared (TIOError, TIllegalArgument) or a TApplicationException.
type thriftError struct {
	Kind    string
	Message string
}

func (e *thriftError) Error() string { return e.Kind + ": " + e.Message }

// thriftConn is one framed binary-protocol connection.
type thriftConn struct {
	c   net.Conn
	r   *bufio.Reader
	seq int32
}

func dialThrift(ctx context.Context, addr string) (*thriftConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	return &thriftConn{c: c, r: bufio.NewReader(c)}, nil
}

func (t *thriftConn) Close() error { return t.c.Close() }

// call sends method with the already-encoded argument fields (without the closing stop byte) and returns the
// reply's result struct, positioned at its first field.
func (t *thriftConn) call(method string, args []byte) (*reader, error) {
	t.seq++
	var msg []byte
	msg = binary.BigEndian.AppendUint32(msg, version1|msgCall)
	msg = appendString(msg, method)
	msg = binary.BigEndian.AppendUint32(msg, uint32(t.seq))
	msg = append(msg, args...)
	msg = append(msg, tStop)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
	if _, err := t.c.Write(append(frame, msg...)); err != nil {
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(t.r, hdr[:]); err != nil {
		return nil, fmt.Errorf("read %s reply: %w", method, err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("read %s reply: frame of %d bytes exceeds %d (is the server framed binary Thrift?)", method, n, maxFrame)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(t.r, payload); err != nil {
		return nil, fmt.Errorf("read %s reply: %w", method, err)
	}
	return decodeReply(payload, method, t.seq)
}

// decodeReply checks a reply message's header and returns a reader at the start of its result struct. A
// TApplicationException comes back as a *thriftError.
func decodeReply(payload []byte, method string, seq int32) (*reader, error) {
	r := &reader{b: payload}
	v, err := r.i32()
	if err != nil {
		return nil, fmt.Errorf("reply header: %w", err)
	}
	if uint32(v)&versionMask != version1 {
		return nil, fmt.Errorf("reply header %#08x is not a strict binary-protocol message", uint32(v))
	}
	typ := uint32(v) & 0xff
	name, err := r.bin()
	if err != nil {
		return nil, fmt.Errorf("reply method name: %w", err)
	}
	gotSeq, err := r.i32()
	if err != nil {
		return nil, fmt.Errorf("reply sequence id: %w", err)
	}
	if string(name) != method {
		return nil, fmt.Errorf("reply is for method %q, want %q", name, method)
	}
	if gotSeq != seq {
		return nil, fmt.Errorf("reply has sequence id %d, want %d", gotSeq, seq)
	}
	switch typ {
	case msgReply:
		return r, nil
	case msgException:
		msg, err := r.exceptionMessage()
		if err != nil {
			return nil, fmt.Errorf("application exception: %w", err)
		}
		return nil, &thriftError{Kind: "TApplicationException", Message: msg}
	default:
		return nil, fmt.Errorf("reply has message type %d, want %d (reply) or %d (exception)", typ, msgReply, msgException)
	}
}

// result reads a result struct: field 0 is the return value, decoded by success; any other field is a
// declared exception whose field 1 is its message.
func (r *reader) result(exceptions map[int16]string, success func(*reader, byte) error) error {
	typ, id, err := r.fieldHeader()
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	switch {
	case typ == tStop:
		return errors.New("result has neither a value nor an exception")
	case id == 0:
		return success(r, typ)
	case typ == tStruct:
		kind := exceptions[id]
		if kind == "" {
			kind = fmt.Sprintf("exception field %d", id)
		}
		msg, err := r.exceptionMessage()
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		return &thriftError{Kind: kind, Message: msg}
	default:
		return fmt.Errorf("result field %d has type %d, want a struct", id, typ)
	}
}

// exceptionMessage reads a struct whose field 1 is a string message (TIOError, TIllegalArgument,
// TApplicationException) and returns the message.
func (r *reader) exceptionMessage() (string, error) {
	var msg string
	for {
		typ, id, err := r.fieldHeader()
		if err != nil {
			return "", err
		}
		if typ == tStop {
			return msg, nil
		}
		if id == 1 && typ == tString {
			b, err := r.bin()
			if err != nil {
				return "", err
			}
			msg = string(b)
			continue
		}
		if err := r.skip(typ, 0); err != nil {
			return "", err
		}
	}
}

// reader decodes the binary protocol from a byte slice; every read is bounds-checked.
type reader struct {
	b   []byte
	off int
}

var errShort = errors.New("thrift: message ends early")

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errShort
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

func (r *reader) u8() (byte, error) {
	p, err := r.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (r *reader) i16() (int16, error) {
	p, err := r.take(2)
	if err != nil {
		return 0, err
	}
	return int16(binary.BigEndian.Uint16(p)), nil
}

func (r *reader) i32() (int32, error) {
	p, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(p)), nil
}

func (r *reader) bin() ([]byte, error) {
	n, err := r.i32()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("thrift: negative length %d", n)
	}
	return r.take(int(n))
}

func (r *reader) fieldHeader() (typ byte, id int16, err error) {
	if typ, err = r.u8(); err != nil || typ == tStop {
		return typ, 0, err
	}
	id, err = r.i16()
	return typ, id, err
}

// skip reads past one value of type typ.
func (r *reader) skip(typ byte, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("thrift: values nested deeper than %d", maxDepth)
	}
	var err error
	switch typ {
	case tBool, tByte:
		_, err = r.take(1)
	case tI16:
		_, err = r.take(2)
	case tI32:
		_, err = r.take(4)
	case tDouble, tI64:
		_, err = r.take(8)
	case tString:
		_, err = r.bin()
	case tStruct:
		for {
			ft, _, err := r.fieldHeader()
			if err != nil {
				return err
			}
			if ft == tStop {
				return nil
			}
			if err := r.skip(ft, depth+1); err != nil {
				return err
			}
		}
	case tMap:
		var kt, vt byte
		var n int32
		if kt, err = r.u8(); err != nil {
			return err
		}
		if vt, err = r.u8(); err != nil {
			return err
		}
		if n, err = r.count(2); err != nil {
			return err
		}
		for range n {
			if err := r.skip(kt, depth+1); err != nil {
				return err
			}
			if err := r.skip(vt, depth+1); err != nil {
				return err
			}
		}
	case tSet, tList:
		var et byte
		var n int32
		if et, err = r.u8(); err != nil {
			return err
		}
		if n, err = r.count(1); err != nil {
			return err
		}
		for range n {
			if err := r.skip(et, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("thrift: unknown type id %d at byte %d", typ, r.off-1)
	}
	return err
}

// count reads a container size and rejects sizes that cannot fit in what is left (each element takes at least
// minBytes bytes), so a corrupt size never drives a long loop.
func (r *reader) count(minBytes int) (int32, error) {
	n, err := r.i32()
	if err != nil {
		return 0, err
	}
	if n < 0 || int(n) > (len(r.b)-r.off)/minBytes {
		return 0, fmt.Errorf("thrift: container size %d does not fit in the %d bytes left", n, len(r.b)-r.off)
	}
	return n, nil
}

// stringList decodes a list<string>.
func (r *reader) stringList(typ byte) ([]string, error) {
	if typ != tList {
		return nil, fmt.Errorf("value has type %d, want a list", typ)
	}
	et, err := r.u8()
	if err != nil {
		return nil, err
	}
	if et != tString {
		return nil, fmt.Errorf("list elements have type %d, want strings", et)
	}
	n, err := r.count(4)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for range n {
		b, err := r.bin()
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendFieldHeader(b []byte, typ byte, id int16) []byte {
	b = append(b, typ)
	return binary.BigEndian.AppendUint16(b, uint16(id))
}

// hbaseExceptions maps THBaseService's declared exception fields to their names.
var hbaseExceptions = map[int16]string{1: "TIOError", 2: "TIllegalArgument"}

// probeHBase asks the Thrift2 gateway at addr for the namespaces (answered by the master once it has finished
// initialising) and whether a row exists in hbase:meta (answered by the region server that holds meta).
// It returns the namespaces.
func probeHBase(ctx context.Context, addr string) ([]string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	c, err := dialThrift(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()

	r, err := c.call("listNamespaces", nil)
	if err != nil {
		return nil, err
	}
	var namespaces []string
	err = r.result(hbaseExceptions, func(r *reader, typ byte) error {
		namespaces, err = r.stringList(typ)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listNamespaces: %w", err)
	}
	if !slices.Contains(namespaces, "hbase") {
		return namespaces, fmt.Errorf("listNamespaces: got %v, want the system namespace \"hbase\" among them", namespaces)
	}

	// exists(1: binary table, 2: TGet{1: binary row})
	var args []byte
	args = appendFieldHeader(args, tString, 1)
	args = appendString(args, "hbase:meta")
	args = appendFieldHeader(args, tStruct, 2)
	args = appendFieldHeader(args, tString, 1)
	args = appendString(args, "frontier-probe")
	args = append(args, tStop)
	r, err = c.call("exists", args)
	if err != nil {
		return namespaces, err
	}
	err = r.result(hbaseExceptions, func(r *reader, typ byte) error {
		if typ != tBool {
			return fmt.Errorf("value has type %d, want a bool", typ)
		}
		_, err := r.u8()
		return err
	})
	if err != nil {
		return namespaces, fmt.Errorf("exists on hbase:meta: %w", err)
	}
	return namespaces, nil
}
