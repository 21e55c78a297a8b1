package standalone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// ManifestFile is the file in the data directory that records the crawl's Manifest.
const ManifestFile = "crawl.json"

// Manifest is what a data directory's bytes mean: the settings under which its states, queue rows and stream
// messages were written. A crawl resumed with a different one is refused, because:
//   - another canonicalization or fingerprint gives a known URL a new fingerprint, so the URL-seen test lets
//     every page be fetched again and the old rows are never matched;
//   - another codec cannot read the queued requests and stream messages;
//   - another spider count strands the queue rows and feed messages of the vanished partitions (a host's
//     partition is crc32(host) mod spiders), and another strategy-worker count moves hosts between workers
//     while their events are still queued.
type Manifest struct {
	Canonicalization string `json:"canonicalization,omitempty"`
	Fingerprint      string `json:"fingerprint,omitempty"`
	Codec            string `json:"codec"`
	Spiders          int    `json:"spiders"`
	StrategyWorkers  int    `json:"strategy_workers"`
	// GatewayPartitions are the spider-feed partitions past the spiders' that a URLFrontier gateway owns
	// (Deps.GatewayPartitions; standalone --urlfrontier --seeds), part of the feed's partition count.
	GatewayPartitions int `json:"gateway_partitions,omitempty"`
}

// gatewayFeeds returns the crawl's manifest and its spider-feed partition count: cfg.Spiders and the
// partitions past them that deps.GatewayPartitions names, the gateway's own, which must follow the spiders'
// without a gap.
func gatewayFeeds(cfg Config, deps Deps) (Manifest, int, error) {
	m, feeds := cfg.manifest(), cfg.Spiders
	if deps.Gateway == nil {
		return m, feeds, nil
	}
	for _, p := range slices.Sorted(slices.Values(deps.GatewayPartitions)) {
		if p > feeds {
			return m, 0, fmt.Errorf("standalone: the gateway's spider-feed partition %d leaves partition %d without an owner", p, feeds)
		}
		if p == feeds {
			feeds++
		}
	}
	m.GatewayPartitions = feeds - cfg.Spiders
	return m, feeds, nil
}

func (c Config) manifest() Manifest {
	return Manifest{Canonicalization: c.Canonicalization, Fingerprint: c.Fingerprint, Codec: c.Codec,
		Spiders: c.Spiders, StrategyWorkers: c.StrategyWorkers}
}

// differences names, with the configuration key, every setting of m that want changes; empty settings of
// either side (not recorded, not known) are not compared.
func (m Manifest) differences(want Manifest) []string {
	var d []string
	str := func(key, was, now string) {
		if was != "" && now != "" && was != now {
			d = append(d, fmt.Sprintf("%s %q (this run asks for %q)", key, was, now))
		}
	}
	num := func(key string, was, now int) {
		if was != 0 && now != 0 && was != now {
			d = append(d, fmt.Sprintf("%s = %d (this run asks for %d)", key, was, now))
		}
	}
	str("identity.canonicalization", m.Canonicalization, want.Canonicalization)
	str("identity.fingerprint", m.Fingerprint, want.Fingerprint)
	str("codec", m.Codec, want.Codec)
	num("standalone.spiders", m.Spiders, want.Spiders)
	num("standalone.strategy_workers", m.StrategyWorkers, want.StrategyWorkers)
	if m.GatewayPartitions != want.GatewayPartitions {
		d = append(d, fmt.Sprintf("%d spider-feed partition(s) of a URLFrontier gateway's own beside the spiders' "+
			"(this run asks for %d; standalone --urlfrontier with --seeds starts a crawl with one)", m.GatewayPartitions, want.GatewayPartitions))
	}
	return d
}

// ReadManifest reads the Manifest of the crawl in the data directory dir. ok is false, with a nil error, when
// dir has none (a new crawl, or one written before manifests existed); a manifest that cannot be read or
// parsed is an error.
func ReadManifest(dir string) (m Manifest, ok bool, err error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Manifest{}, false, nil
	case err != nil:
		return Manifest{}, false, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, false, fmt.Errorf("data directory %s: %s is not a crawl manifest: %w", dir, path, err)
	}
	return m, true, nil
}

// checkManifest compares the data directory's manifest with this run's settings and reports whether the
// directory holds a crawl already. A directory without a manifest gets one; a directory whose manifest
// differs is refused with every difference named.
func checkManifest(dir, storeDir string, want Manifest) (resumed bool, err error) {
	have, ok, err := ReadManifest(dir)
	switch {
	case ok:
		if d := have.differences(want); len(d) > 0 {
			msg := fmt.Sprintf("data directory %s holds a crawl written with %s", dir, d[0])
			for _, x := range d[1:] {
				msg += ", " + x
			}
			return true, errors.New(msg + "; these settings decide what its stored URLs, queue and streams mean, " +
				"so resume it with the recorded values, or start a new crawl in another standalone.data_dir")
		}
		return true, nil
	case err != nil:
		return false, err
	}
	// No manifest: a new crawl, or one written before manifests existed (its store is there).
	path := filepath.Join(dir, ManifestFile)
	_, serr := os.Stat(storeDir)
	resumed = serr == nil
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return resumed, fmt.Errorf("data directory: %w", err)
	}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return resumed, err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return resumed, fmt.Errorf("data directory: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return resumed, fmt.Errorf("data directory: write %s: %w", path, err)
	}
	return resumed, nil
}
