package metadata_test

import (
	"testing"

	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/metadata/metadatatest"
)

func TestMemoryConformance(t *testing.T) {
	metadatatest.Run(t, func(t *testing.T) metadata.Store { return metadata.NewMemory() },
		func(t *testing.T, s metadata.Store) metadata.Store { return s })
	metadatatest.RunDomains(t, func(t *testing.T) metadata.Domains { return metadata.NewMemoryDomains() },
		func(t *testing.T, d metadata.Domains) metadata.Domains { return d })
}
