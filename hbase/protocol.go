package hbase

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/apache/thrift/lib/go/thrift"
)

// binaryIn is the input side of the binary protocol with a cheaper ReadBinary: thrift's copies every byte
// field (a row key, a family, a qualifier, a value: four per cell of a scan's or multi-get's results) through
// a new bytes.Buffer that grows to 512 bytes at least, so a 1-byte family cost a 512-byte allocation and a
// queue scan's rows most of the client's CPU in allocation and GC. This one reads a field into a slice of its
// size. A size beyond readChunk (which a result only claims if it holds such a field) is read in pieces, as
// thrift does, so a corrupt size fails at the stream's end instead of allocating what it claims.
type binaryIn struct {
	thrift.TProtocol
	r   io.Reader // the transport the protocol reads
	max int32     // TConfiguration.MaxMessageSize
}

const readChunk = 1 << 20

func newBinaryIn(tr thrift.TTransport, conf *thrift.TConfiguration) *binaryIn {
	return &binaryIn{TProtocol: thrift.NewTBinaryProtocolConf(tr, conf), r: tr, max: conf.GetMaxMessageSize()}
}

// ReadBinary reads a byte field: its size, then its bytes.
func (p *binaryIn) ReadBinary(ctx context.Context) ([]byte, error) {
	size, err := p.ReadI32(ctx)
	if err != nil {
		return nil, err
	}
	if size < 0 || size > p.max {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.SIZE_LIMIT, fmt.Errorf("hbase: thrift binary field of %d bytes", size))
	}
	if size <= readChunk {
		b := make([]byte, size)
		_, err := io.ReadFull(p.r, b)
		return b, thrift.NewTProtocolException(err)
	}
	var buf bytes.Buffer
	_, err = io.CopyN(&buf, p.r, int64(size))
	return buf.Bytes(), thrift.NewTProtocolException(err)
}
