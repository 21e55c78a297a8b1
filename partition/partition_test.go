package partition

import (
	"bufio"
	"encoding/hex"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/go-faster/city"
)

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"

type vector struct {
	line           int
	kind           string
	key            []byte
	city           uint64
	crcv           int32
	fp, fp07, crcs string
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	f, err := os.Open("testdata/vectors.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for ln := 1; sc.Scan(); ln++ {
		s := sc.Text()
		if strings.HasPrefix(s, "#") {
			continue
		}
		c := strings.Split(s, "\t")
		if len(c) != 7 {
			t.Fatalf("vectors.tsv:%d: %d columns, want 7", ln, len(c))
		}
		key, err := hex.DecodeString(c[1])
		if err != nil {
			t.Fatalf("vectors.tsv:%d: %v", ln, err)
		}
		ch, err1 := strconv.ParseUint(c[2], 10, 64)
		crc, err2 := strconv.ParseInt(c[3], 10, 32)
		if err1 != nil || err2 != nil {
			t.Fatalf("vectors.tsv:%d: %v %v", ln, err1, err2)
		}
		out = append(out, vector{ln, c[0], key, ch, int32(crc), c[4], c[5], c[6]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 1000 {
		t.Fatalf("only %d vectors", len(out))
	}
	return out
}

// TestFronteraVectors checks every partitioner against partitions computed by frontera itself for n = 1..64.
func TestFronteraVectors(t *testing.T) {
	vs := loadVectors(t)
	var checked int
	for _, v := range vs {
		if got := city.Hash64(v.key); got != v.city {
			t.Errorf("line %d %s %q: CityHash64 = %d, want %d", v.line, v.kind, v.key, got, v.city)
		}
		if got := int32(crc32.ChecksumIEEE(v.key)); got != v.crcv {
			t.Errorf("line %d: crc32 = %d, want %d", v.line, got, v.crcv)
		}
		for _, tc := range []struct {
			name string
			f    Func
			want string
		}{{"fingerprint", Fingerprint, v.fp}, {"fingerprint_0.7", Fingerprint07, v.fp07}, {"crc32_name", Crc32Name, v.crcs}} {
			if tc.want == "-" {
				continue // Frontera raises for this key
			}
			for n := 1; n <= 64; n++ {
				want := strings.IndexByte(alphabet, tc.want[n-1])
				if got := tc.f(v.key, n); got != want {
					t.Errorf("line %d %s: %s(%q, %d) = %d, want %d", v.line, v.kind, tc.name, v.key, n, got, want)
				}
				checked++
			}
		}
	}
	t.Logf("%d keys, %d partition checks", len(vs), checked)
}

func TestEdgeCases(t *testing.T) {
	for _, f := range []struct {
		name string
		f    Func
	}{{"fingerprint", Fingerprint}, {"fingerprint_0.7", Fingerprint07}, {"crc32_name", Crc32Name}} {
		for _, n := range []int{0, -1} {
			if got := f.f([]byte("89e6a0649e06d83370cdf2cbfb05f363934a8d0c"), n); got != 0 {
				t.Errorf("%s with n=%d = %d, want 0", f.name, n, got)
			}
		}
	}
	for _, n := range []int{1, 3, 7, 64} {
		if got := Crc32Name(nil, n); got != 0 {
			t.Errorf("Crc32Name(nil, %d) = %d, want 0 (Frontera: None key → first partition)", n, got)
		}
	}
	for _, key := range []string{"", "0123456789abcdef", "zz23456789abcdef0123"} {
		if got := Fingerprint07([]byte(key), 8); got != 0 {
			t.Errorf("Fingerprint07(%q) = %d, want 0 for a key Frontera rejects", key, got)
		}
	}
	// Signed floor modulo differs from uint32 modulo unless n is a power of two.
	key := []byte("example.com") // crc32 is negative as int32
	if v := int32(crc32.ChecksumIEEE(key)); v >= 0 {
		t.Fatalf("test key has a non-negative crc %d", v)
	}
	if Crc32Name(key, 3) == int(crc32.ChecksumIEEE(key)%3) && Crc32Name(key, 5) == int(crc32.ChecksumIEEE(key)%5) && Crc32Name(key, 7) == int(crc32.ChecksumIEEE(key)%7) {
		t.Error("Crc32Name agrees with the unsigned modulo for 3, 5 and 7; the signed rule is not applied")
	}
}

func TestByName(t *testing.T) {
	for name, want := range map[string]string{
		"fingerprint": "fingerprint", "FingerprintPartitioner": "fingerprint",
		"frontera.contrib.backends.partitioners.FingerprintPartitioner": "fingerprint",
		"crc32_name": "crc32_name", "Crc32NamePartitioner": "crc32_name", "hostname": "crc32_name",
		"fingerprint_0.7": "fingerprint_0.7",
	} {
		f, err := ByName(name)
		if err != nil {
			t.Errorf("ByName(%q): %v", name, err)
			continue
		}
		g, _ := ByName(want)
		for _, k := range []string{"a", "example.com", "89e6a0649e06d83370cdf2cbfb05f363934a8d0c"} {
			if f([]byte(k), 13) != g([]byte(k), 13) {
				t.Errorf("ByName(%q) is not %s", name, want)
			}
		}
	}
	_, err := ByName("murmur2")
	if err == nil || !strings.Contains(err.Error(), "murmur2") || !strings.Contains(err.Error(), "crc32_name") {
		t.Errorf("unknown name error = %v, want it to name the culprit and the known names", err)
	}
}

func benchKeys() [][]byte {
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte(strconv.Itoa(i*7919) + "0123456789abcdef0123456789abcdef01234567"[:40-len(strconv.Itoa(i*7919))])
	}
	return keys
}

func benchmark(b *testing.B, f Func, keys [][]byte) {
	var i, sink int
	for b.Loop() {
		sink += f(keys[i&1023], 48)
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	_ = sink
}

func BenchmarkFingerprint(b *testing.B)   { benchmark(b, Fingerprint, benchKeys()) }
func BenchmarkFingerprint07(b *testing.B) { benchmark(b, Fingerprint07, benchKeys()) }
func BenchmarkCrc32Name(b *testing.B) {
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte("www.host" + strconv.Itoa(i) + ".example.com")
	}
	benchmark(b, Crc32Name, keys)
}
