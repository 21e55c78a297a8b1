package state_test

import (
	"testing"

	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

func TestMemoryConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) state.Store { return state.NewMemory() },
		statetest.WithReopen(func(t *testing.T, s state.Store) state.Store { return s }))
}
