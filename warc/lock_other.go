//go:build !unix

package warc

import "os"

// lockFile does nothing where flock is not available: New then recovers every ".open" file of its prefix and
// host name, so two Writers must not share a directory, prefix and host name there.
func lockFile(*os.File) error { return nil }

func tryLock(string) (unlock func(), free bool, err error) { return func() {}, true, nil }
