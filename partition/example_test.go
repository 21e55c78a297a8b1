package partition_test

import (
	"fmt"

	"github.com/frontiercrawl/frontier/partition"
)

// Example prints the partitions frontera's Crc32NamePartitioner and FingerprintPartitioner give for these keys.
func Example() {
	// The spider feed with QUEUE_HOSTNAME_PARTITIONING: the host name decides the spider.
	feed, err := partition.ByName("crc32_name")
	if err != nil {
		panic(err)
	}
	fmt.Println(feed([]byte("example.com"), 3))

	// The spider log: the hex domain fingerprint decides the strategy worker.
	log, _ := partition.ByName("fingerprint")
	fmt.Println(log([]byte("89e6a0649e06d83370cdf2cbfb05f363934a8d0c"), 4))
	// Output:
	// 1
	// 1
}
