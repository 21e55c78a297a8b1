package hbase

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/queue/queuetest"
)

// scanResults is a queue scan's answer as the Thrift2 gateway sends it: n rows of a request each, encoded.
func scanResults(tb testing.TB, n int) ([]byte, *thrift2.THBaseServiceGetScannerResultsResult) {
	tb.Helper()
	res := &thrift2.THBaseServiceGetScannerResultsResult{Success: []*thrift2.TResult_{}}
	for i := range n {
		it := queuetest.Item(0, fmt.Sprintf("host%05d.example.com", i%100), i, 0.5)
		ts := int64(1700000000000 + i)
		res.Success = append(res.Success, &thrift2.TResult_{Row: queueKey(0, 5, it.Host, it.Fingerprint), ColumnValues: []*thrift2.TColumnValue{
			{Family: famQueue, Qualifier: qualQueue, Value: queueValue(it.Score, 0, make([]byte, 200)), Timestamp: &ts}}})
	}
	conf := &thrift.TConfiguration{MaxMessageSize: 1 << 30}
	mem := thrift.NewTMemoryBuffer()
	if err := res.Write(context.Background(), thrift.NewTBinaryProtocolConf(mem, conf)); err != nil {
		tb.Fatal(err)
	}
	return mem.Bytes(), res
}

func readResults(tb testing.TB, enc []byte, fast bool) *thrift2.THBaseServiceGetScannerResultsResult {
	conf := &thrift.TConfiguration{MaxMessageSize: 1 << 30}
	mem := thrift.NewTMemoryBuffer()
	mem.Write(enc)
	var p thrift.TProtocol = thrift.NewTBinaryProtocolConf(mem, conf)
	if fast {
		p = newBinaryIn(mem, conf)
	}
	var got thrift2.THBaseServiceGetScannerResultsResult
	if err := got.Read(context.Background(), p); err != nil {
		tb.Fatal(err)
	}
	return &got
}

func TestBinaryInReadsWhatThriftWrites(t *testing.T) {
	enc, want := scanResults(t, 50)
	if got := readResults(t, enc, true); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back differs:\n%v\nwant\n%v", got, want)
	}
	// A size beyond the message limit fails instead of allocating.
	mem := thrift.NewTMemoryBuffer()
	mem.Write([]byte{0x7f, 0xff, 0xff, 0xff})
	if _, err := newBinaryIn(mem, &thrift.TConfiguration{MaxMessageSize: 1 << 20}).ReadBinary(context.Background()); err == nil {
		t.Error("a 2 GiB field: no error")
	}
	// A size past readChunk that the stream does not hold fails at its end.
	mem.Write([]byte{0x10, 0, 0, 0, 1, 2, 3})
	if _, err := newBinaryIn(mem, &thrift.TConfiguration{MaxMessageSize: 1 << 30}).ReadBinary(context.Background()); err == nil {
		t.Error("a truncated 256 MiB field: no error")
	}
}

// BenchmarkReadScanResults decodes a 2,048-row queue scan's answer (a request of 200 bytes a row) with
// thrift's binary protocol and with binaryIn; it reports allocations and bytes per row.
func BenchmarkReadScanResults(b *testing.B) {
	const rows = 2048
	enc, _ := scanResults(b, rows)
	for _, fast := range []bool{false, true} {
		b.Run(map[bool]string{false: "thrift", true: "binaryIn"}[fast], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				readResults(b, enc, fast)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
