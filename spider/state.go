package spider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// feedState is what a cleanly stopped spider leaves for its successor: the feed offsets after the committed
// one whose outcomes were reported already. Kafka commits one offset per partition, so without it a restart
// would fetch again every request that finished after the oldest one still in flight.
type feedState struct {
	Partition int     `json:"partition"`
	After     int64   `json:"after"` // the committed watermark: the next fetched offset is After+1
	Done      []int64 `json:"done"`
}

func (s *Spider) statePath() string {
	if s.cfg.StateDir == "" {
		return ""
	}
	return filepath.Join(s.cfg.StateDir, fmt.Sprintf("spider-feed-%d.json", s.deps.Partition))
}

// saveFeedState writes the reported offsets beyond the watermark (after the final commit).
func (s *Spider) saveFeedState() error {
	path := s.statePath()
	if path == "" {
		return nil
	}
	after, done, ok := s.tracker.beyond()
	if !ok || len(done) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("spider: state: %w", err)
		}
		return nil
	}
	b, err := json.Marshal(feedState{Partition: s.deps.Partition, After: after, Done: done})
	if err != nil {
		return fmt.Errorf("spider: state: %w", err)
	}
	if err := os.MkdirAll(s.cfg.StateDir, 0o755); err != nil {
		return fmt.Errorf("spider: state: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("spider: state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("spider: state: %w", err)
	}
	return nil
}

// loadFeedState reads and removes the state a previous run left. A missing file is no state.
func (s *Spider) loadFeedState() {
	path := s.statePath()
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("spider state unreadable; ignored", "path", path, "err", err)
		}
		return
	}
	var st feedState
	if err := json.Unmarshal(b, &st); err != nil || st.Partition != s.deps.Partition {
		s.log.Warn("spider state invalid; ignored", "path", path, "err", err)
		return
	}
	s.skip = make(map[int64]bool, len(st.Done))
	for _, o := range st.Done {
		s.skip[o] = true
	}
	s.skipAfter = st.After
	s.log.Info("resuming: offsets already reported will not be fetched again", "after", st.After, "count", len(st.Done))
}

// skipped reports whether a fetched offset was reported by the previous run. The first fetched offset must
// be above the saved watermark, or the state belongs to another feed and is dropped.
func (s *Spider) skipped(offset int64) bool {
	if s.skip == nil {
		return false
	}
	if !s.skipChecked {
		s.skipChecked = true
		// The feed resumes after its committed offset, which is the saved watermark or (when a later commit
		// was not followed by a save) beyond it; an offset at or below the watermark means another feed.
		if offset <= s.skipAfter {
			s.log.Warn("spider state does not match the feed position; ignored", "after", s.skipAfter, "got", offset)
			s.skip = nil
			return false
		}
		for o := range s.skip {
			if o < offset {
				delete(s.skip, o) // committed since: never delivered again
			}
		}
	}
	if s.skip[offset] {
		delete(s.skip, offset)
		if len(s.skip) == 0 {
			s.skip = nil
		}
		return true
	}
	return false
}

// beyond returns the watermark offset and the done offsets after it; ok is false when nothing was tracked.
func (t *tracker) beyond() (after int64, done []int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.head >= len(t.q) {
		return 0, nil, false
	}
	after = t.offs[t.head] - 1
	for i := t.head; i < len(t.q); i++ {
		if t.q[i] == nil {
			done = append(done, t.offs[i])
		}
	}
	slices.Sort(done)
	return after, done, true
}
