package pebblestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
)

// seekMin is the number of keys from which a batch's point reads walk one iterator forward (seekerRange)
// instead of making a Get each: a Get builds and tears down an iterator over every level for its one key,
// while one iterator asked for keys in ascending order keeps its position in every level between nearby keys.
const seekMin = 16

// seeker is seekerRange over the keys of one table prefix.
func (d *DB) seeker(prefix byte, n int, mostlyAbsent bool) (look func(key []byte) ([]byte, bool, error), done func(), err error) {
	return d.seekerRange([]byte{prefix}, []byte{prefix + 1}, n, mostlyAbsent)
}

// seekerRange returns look, which reads the value stored at a key in [lo, hi), and done, which releases what
// look holds (call it once, after the last look). The keys must be asked in ascending order; a value is valid
// until the next call of look or done. n is about how many keys will be asked: below seekMin, look makes a
// Get per key.
//
// With mostlyAbsent (most keys asked are in no table: new links), the iterator seeks with SeekPrefixGE (the
// whole key is the prefix with Pebble's default comparer), so, as a Get does, it asks each table's Bloom
// filter first and skips a table that cannot hold the key instead of reading its index and data blocks
// (BenchmarkPagesPut). Keys that are stored (Ack's index entries and rows) gain nothing from the filters and
// seek with SeekGE (BenchmarkQueueNextTombstones, ack-cpu-ns/row).
func (d *DB) seekerRange(lo, hi []byte, n int, mostlyAbsent bool) (look func(key []byte) ([]byte, bool, error), done func(), err error) {
	if n < seekMin {
		var closer io.Closer
		release := func() {
			if closer != nil {
				closer.Close()
				closer = nil
			}
		}
		return func(key []byte) ([]byte, bool, error) {
			release()
			v, c, err := d.db.Get(key)
			if errors.Is(err, pebble.ErrNotFound) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, fmt.Errorf("get %x: %w", key, err)
			}
			closer = c
			return v, true, nil
		}, release, nil
	}
	// UseL6Filters: Pebble reads no L6 Bloom filter unless asked, and a database smaller than Pebble's level
	// sizes (the usual standalone crawl) keeps every compacted table in L6, so without it an absent key's
	// SeekPrefixGE read an index and a data block there.
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi, UseL6Filters: mostlyAbsent})
	if err != nil {
		return nil, nil, err
	}
	return func(key []byte) ([]byte, bool, error) {
			var ok bool
			if mostlyAbsent {
				ok = it.SeekPrefixGE(key)
			} else {
				ok = it.SeekGE(key)
			}
			if !ok || !bytes.Equal(it.Key(), key) {
				if err := it.Error(); err != nil {
					return nil, false, fmt.Errorf("seek %x: %w", key, err)
				}
				return nil, false, nil
			}
			v, err := it.ValueAndErr()
			if err != nil {
				return nil, false, fmt.Errorf("read %x: %w", key, err)
			}
			return v, true, nil
		}, func() {
			if it != nil {
				it.Close()
				it = nil
			}
		}, nil
}

// batchHeaderLen is the length of a Pebble batch's header (sequence number u64, count u32), and
// batchRecordOverhead bounds what a batch adds to one Set's key and value (kind, two uvarint lengths).
const (
	batchHeaderLen      = batchrepr.HeaderLen
	batchRecordOverhead = 1 + 2*binary.MaxVarintLen32
)

// newBatch returns a batch of db whose buffer holds size bytes from the start, so that filling it does not
// grow it by doubling and copying. Pebble sizes a new batch's buffer at its first write to at least 1 KiB:
// asking for less would allocate twice.
func newBatch(db *pebble.DB, size int) *pebble.Batch {
	return db.NewBatchWithSize(max(size, 1<<10))
}
