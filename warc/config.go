package warc

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/klauspost/compress/gzip"
)

// Config says where and how the Writer writes.
type Config struct {
	// Dir is the directory the files go to; it is created if missing. Required.
	Dir string `mapstructure:"dir"`
	// Prefix starts every file name. Default "frontier".
	Prefix string `mapstructure:"prefix"`
	// Hostname ends every file name and fills the warcinfo "hostname" field; e.g. "spider3". Default: the
	// machine's host name. Characters other than letters, digits, '.', '_' and '-' become '_' in file names.
	Hostname string `mapstructure:"hostname"`
	// MaxFileSize rotates to a new file before a write when the current one has reached this many (compressed)
	// bytes. A file can exceed it by one call's records. Default 1 GB, the usual size of crawl WARCs.
	MaxFileSize int64 `mapstructure:"max_file_size"`
	// CompressionLevel is the gzip level, 1 (fastest) to 9 (smallest), or -1 for the default (6).
	CompressionLevel int `mapstructure:"compression_level"`
	// Software, Operator, IsPartOf and Description fill the warcinfo record at the start of each file
	// (empty ones are left out). Software defaults to "Frontier".
	Software    string `mapstructure:"software"`
	Operator    string `mapstructure:"operator"`
	IsPartOf    string `mapstructure:"is_part_of"`
	Description string `mapstructure:"description"`
	// UserAgent and Robots document the crawl in warcinfo (http-header-user-agent, robots).
	UserAgent string `mapstructure:"user_agent"`
	Robots    string `mapstructure:"robots"`
}

// DefaultConfig returns the defaults; set Dir before use.
func DefaultConfig() Config {
	return Config{
		Prefix:           "frontier",
		MaxFileSize:      1_000_000_000,
		CompressionLevel: gzip.DefaultCompression,
		Software:         "Frontier",
		Robots:           "obey",
	}
}

var prefixRE = regexp.MustCompile(`^[A-Za-z0-9._]+(-[A-Za-z0-9._]+)*$`)

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("warc: dir is required"))
	}
	if !prefixRE.MatchString(c.Prefix) {
		errs = append(errs, fmt.Errorf("warc: prefix %q: want letters, digits, '.', '_' and inner '-'", c.Prefix))
	}
	if c.MaxFileSize <= 0 {
		errs = append(errs, fmt.Errorf("warc: max_file_size = %d, want > 0", c.MaxFileSize))
	}
	if c.CompressionLevel != gzip.DefaultCompression && (c.CompressionLevel < gzip.BestSpeed || c.CompressionLevel > gzip.BestCompression) {
		errs = append(errs, fmt.Errorf("warc: compression_level = %d, want 1..9 or -1", c.CompressionLevel))
	}
	for name, v := range map[string]string{"software": c.Software, "operator": c.Operator, "is_part_of": c.IsPartOf,
		"description": c.Description, "user_agent": c.UserAgent, "robots": c.Robots, "hostname": c.Hostname} {
		if err := checkValue(v); err != nil {
			errs = append(errs, fmt.Errorf("warc: %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
