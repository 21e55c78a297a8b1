package spider

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DurableProducer is implemented by spider-log producers whose Send returns only once the messages would
// survive the process being killed (bus/pebblebus with synced writes). With one, and a Config.StateDir, the
// spider keeps a journal of the feed offsets it has reported: after each report it appends their offsets to
// StateDir/spider-feed-P.journal (one write, no fsync: a killed process loses nothing it wrote to the OS), so
// a restart after kill -9 skips every request whose outcome is on the spider log and fetches again only those
// that were in flight. A response handler that is a Flusher (the WARC archive) is flushed before each append,
// so a journaled page is in the archive. Without one, the reported offsets are saved on a clean stop only (spider-feed-P.json),
// and a kill -9 fetches again everything reported since the last feed commit (Config.CommitInterval).
type DurableProducer interface {
	Durable() bool
}

// journalCompactBytes is the size past which the journal is rewritten with only what it still needs.
const journalCompactBytes = 1 << 20

// journal is the append-only record of reported feed offsets. Its first line is a header
// "frontier-spider-journal partition=P after=W": every offset the feed delivers again is above W, or the
// journal belongs to another feed and is ignored. Then one offset a line. Guarded by mu, which also orders the
// reporter's "mark done, append" against compaction.
type journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	size int64
	buf  []byte
}

const journalMagic = "frontier-spider-journal"

func (s *Spider) journalPath() string {
	if s.cfg.StateDir == "" {
		return ""
	}
	return filepath.Join(s.cfg.StateDir, fmt.Sprintf("spider-feed-%d.journal", s.deps.Partition))
}

// durableLog reports whether the spider-log producer acknowledges only what survives a kill.
func (s *Spider) durableLog() bool {
	d, ok := s.deps.Log.(DurableProducer)
	return ok && d.Durable()
}

// loadJournal adds the offsets of a journal left by a previous run to the skip set. It reports whether one
// was found.
func (s *Spider) loadJournal() bool {
	path := s.journalPath()
	if path == "" {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("spider journal unreadable; ignored", "path", path, "err", err)
		}
		return false
	}
	after, offs, err := parseJournal(b, s.deps.Partition)
	if err != nil {
		s.log.Warn("spider journal invalid; ignored", "path", path, "err", err)
		return false
	}
	if s.skip == nil {
		s.skip = make(map[int64]bool, len(offs))
		s.skipAfter = after
	}
	s.skipAfter = min(s.skipAfter, after)
	for _, o := range offs {
		if o > after {
			s.skip[o] = true
		}
	}
	s.log.Info("resuming: offsets already reported will not be fetched again", "after", after, "count", len(s.skip), "journal", path)
	return true
}

// parseJournal reads a journal; a torn last line (a write cut by a power loss) is ignored.
func parseJournal(b []byte, partition int) (after int64, offs []int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() {
		return 0, nil, errors.New("empty journal")
	}
	var p int
	if _, err := fmt.Sscanf(sc.Text(), journalMagic+" partition=%d after=%d", &p, &after); err != nil {
		return 0, nil, fmt.Errorf("header %q: %w", sc.Text(), err)
	}
	if p != partition {
		return 0, nil, fmt.Errorf("journal of partition %d, not %d", p, partition)
	}
	for sc.Scan() {
		o, err := strconv.ParseInt(strings.TrimSpace(sc.Text()), 10, 64)
		if err != nil {
			continue // torn or corrupt line: that offset is fetched again, nothing is lost
		}
		offs = append(offs, o)
	}
	return after, offs, sc.Err()
}

// openJournal rewrites the journal with the skip set loaded at start (so nothing the previous run reported
// is forgotten if this one dies too) and opens it for appending.
func (s *Spider) openJournal() error {
	j := &journal{path: s.journalPath()}
	s.journal = j
	if err := s.compactJournal(s.skipAfter); err != nil {
		return err
	}
	// The journal now holds what a clean stop's state file held; that file would only go stale.
	if p := s.statePath(); p != "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("spider state file not removed", "path", p, "err", err)
		}
	}
	return nil
}

// compactJournal rewrites the journal with after as its watermark and the offsets still needed: those
// reported beyond the tracker's watermark and those of the previous run not yet fetched again. It runs on
// the feed goroutine (the skip set is its own) and holds the journal lock, so no report is appended meanwhile.
func (s *Spider) compactJournal(after int64) error {
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	var offs []int64
	if _, done, ok := s.tracker.beyond(); ok {
		offs = done
	}
	for o := range s.skip {
		offs = append(offs, o)
	}
	slices.Sort(offs)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s partition=%d after=%d\n", journalMagic, s.deps.Partition, after)
	for _, o := range offs {
		if o > after {
			b.WriteString(strconv.FormatInt(o, 10))
			b.WriteByte('\n')
		}
	}
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		return fmt.Errorf("spider journal: %w", err)
	}
	tmp := j.path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("spider journal: %w", err)
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return fmt.Errorf("spider journal: %w", err)
	}
	if j.f != nil {
		_ = j.f.Close()
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		j.f = nil
		return fmt.Errorf("spider journal: %w", err)
	}
	j.f, j.size = f, int64(b.Len())
	return nil
}

// reported marks the outcomes of batch done and, with a journal, appends their offsets in one write. What the
// response handler stored for them (WARC records) is made durable first (Flusher), once per batch: a journaled
// offset is never fetched again, so its page must already be in the archive when the offset is journaled.
func (s *Spider) reported(batch []*outcome) {
	j := s.journal
	if j == nil {
		for _, o := range batch {
			s.tracker.done(o.entry)
		}
		return
	}
	var flushErr error
	if f, ok := s.deps.Handler.(Flusher); ok {
		flushErr = f.Flush()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buf = j.buf[:0]
	for _, o := range batch {
		s.tracker.done(o.entry)
		j.buf = strconv.AppendInt(j.buf, o.entry.msg.Offset, 10)
		j.buf = append(j.buf, '\n')
	}
	if flushErr != nil {
		// Not journaled: after a crash these requests are fetched (and archived) again. The commit flushes too
		// and fails the same way, so the feed offset stays before them.
		s.log.Warn("response handler flush failed; these requests are not journaled", "requests", len(batch), "err", flushErr)
		return
	}
	if j.f == nil {
		return
	}
	n, err := j.f.Write(j.buf)
	j.size += int64(n)
	if err != nil {
		s.log.Warn("spider journal append failed; these requests are fetched again after a crash", "err", err)
	}
}

// closeJournal closes the journal file; it stays on disk for the next run.
func (s *Spider) closeJournal() {
	if j := s.journal; j != nil {
		j.mu.Lock()
		if j.f != nil {
			_ = j.f.Close()
			j.f = nil
		}
		j.mu.Unlock()
	}
}
