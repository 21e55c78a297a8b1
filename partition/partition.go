// Package partition maps message keys to stream partitions exactly as Frontera 0.8 does, so that a Frontier
// worker and a Frontera spider or worker agree on who owns a host.
//
// Every function has the shape of bus.Partitioner, func(key []byte, n int) int, and returns a partition in
// [0, n). For n < 1 they return 0 (there is no partition to choose; the bus never asks).
//
//	name (config)     Frontera class                                   rule
//	fingerprint       FingerprintPartitioner (0.8)                     CityHash64 v1.1 of the key, unsigned, mod n
//	fingerprint_0.7   FingerprintPartitioner (0.7)                     uint32 little-endian of the bytes unhexed from
//	                                                                   key[0:2]+key[5:7]+key[10:12]+key[15:17], mod n
//	crc32_name        Crc32NamePartitioner                             signed crc32 of the key, Python floor mod n
//
// Frontera keys the spider log by the hex domain fingerprint (fingerprint partitioner) and, with
// QUEUE_HOSTNAME_PARTITIONING, the spider feed by the host name (crc32_name). Note that crc32_name is not
// uint32(crc) mod n: Python takes the signed value and floors, which differs unless n is a power of two.
//
// Vectors in testdata/ were generated from the real frontera package by oracle/gen_partitions.py.
//
// The package imports only the standard library and github.com/go-faster/city. The functions are pure and
// safe for concurrent use.
package partition

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"

	"github.com/go-faster/city"
)

// Func is the shape of a partitioner; it converts to bus.Partitioner.
type Func = func(key []byte, n int) int

// Fingerprint is Frontera 0.8's FingerprintPartitioner: CityHash64 (v1.1) of key, as an unsigned 64-bit
// number, mod n.
func Fingerprint(key []byte, n int) int {
	if n < 1 {
		return 0
	}
	return int(city.Hash64(key) % uint64(n))
}

// Fingerprint07 is Frontera 0.7's FingerprintPartitioner, for a hex fingerprint key: the four bytes unhexed
// from key[0:2], key[5:7], key[10:12] and key[15:17], read as a little-endian uint32, mod n. Frontera raises on a
// key shorter than 17 bytes or not hex there; this returns partition 0 for such a key.
func Fingerprint07(key []byte, n int) int {
	if n < 1 || len(key) < 17 {
		return 0
	}
	var src [8]byte
	copy(src[0:2], key[0:2])
	copy(src[2:4], key[5:7])
	copy(src[4:6], key[10:12])
	copy(src[6:8], key[15:17])
	var dst [4]byte
	if _, err := hex.Decode(dst[:], src[:]); err != nil {
		return 0
	}
	return int(binary.LittleEndian.Uint32(dst[:]) % uint32(n))
}

// Crc32Name is Frontera's Crc32NamePartitioner: the crc32 (IEEE) of key taken as a signed 32-bit number, then
// Python's floor modulo, which is never negative. Frontera maps a None key to partition 0; an empty key has crc
// 0 and so lands there too.
func Crc32Name(key []byte, n int) int {
	if n < 1 {
		return 0
	}
	v := int64(int32(crc32.ChecksumIEEE(key)))
	m := v % int64(n)
	if m < 0 {
		m += int64(n)
	}
	return int(m)
}

var byName = map[string]Func{
	"fingerprint":     Fingerprint,
	"fingerprint_0.7": Fingerprint07,
	"crc32_name":      Crc32Name,
}

// aliases are the names Frontera's settings use for the same functions.
var aliases = map[string]string{
	"fingerprintpartitioner": "fingerprint",
	"crc32namepartitioner":   "crc32_name",
	"hostname":               "crc32_name",
	"frontera.contrib.backends.partitioners.fingerprintpartitioner": "fingerprint",
	"frontera.contrib.backends.partitioners.crc32namepartitioner":   "crc32_name",
}

// Names returns the partitioner names ByName accepts (without aliases), sorted.
func Names() []string {
	out := make([]string, 0, len(byName))
	for k := range byName {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ByName returns the partitioner called name: "fingerprint", "fingerprint_0.7" or "crc32_name". Frontera's class
// names (FingerprintPartitioner, Crc32NamePartitioner, with or without their module path) and "hostname" are
// accepted as aliases, case-insensitively. An unknown name is an error listing the known ones.
func ByName(name string) (Func, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[key]; ok {
		key = a
	}
	if f, ok := byName[key]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("partition: unknown partitioner %q (known: %s)", name, strings.Join(Names(), ", "))
}
