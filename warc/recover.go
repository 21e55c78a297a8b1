package warc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WholeRecords reads r as a WARC file of gzip members (what the Writer writes) and returns the length of its
// longest prefix made of whole records, each a complete gzip member (its CRC and length checked) holding one
// record that parses, and the number of those records. Whatever follows is a torn tail: a member cut by a
// kill or a power loss, or garbage. A file that does not start with a gzip member has no whole record. err
// reports a failure to read r, never a malformed tail. A request record whose response is not among the whole
// records is torn too (its exchange was cut between the two), and so is what follows it.
func WholeRecords(r io.Reader) (end int64, records int, err error) {
	return wholeRecords(r, 0)
}

// wholeRecords is WholeRecords with the Reader's MaxBlock (0: its default).
func wholeRecords(r io.Reader, maxBlock int64) (end int64, records int, err error) {
	er := &errReader{r: r}
	rd := NewReader(er)
	if maxBlock > 0 {
		rd.MaxBlock = maxBlock
	}
	if !rd.zipped {
		return 0, 0, er.err
	}
	// A request record opens an exchange (request, response, metadata: WriteExchange's order): until its
	// response is read too, the prefix kept ends before the request, so a kill between the two members
	// does not leave a request whose WARC-Concurrent-To names a response the file lacks.
	var open string     // the response id the last request names, while that response is not read yet
	var openEnd int64   // the prefix's end before that request
	var openRecords int // and its record count
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		switch rec.Type() {
		case TypeRequest:
			if to := rec.Fields.Get("WARC-Concurrent-To"); to != "" && open == "" {
				open, openEnd, openRecords = to, end, records
			}
		case TypeResponse:
			if rec.ID() == open {
				open = ""
			}
		}
		records++
		end = rd.src.n
	}
	if open != "" {
		end, records = openEnd, openRecords
	}
	return end, records, er.err
}

// errReader remembers the first error of r other than io.EOF, so a read failure is not taken for a torn tail.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// Recovered says what RecoverFile did with one file.
type Recovered struct {
	File    string // the finished file's path ("" if the file held no whole record and was removed)
	Records int    // whole records kept
	Cut     int64  // bytes of torn tail cut
}

// RecoverFile finishes a file that a writer killed before Close left with its ".open" name (path ends with
// OpenSuffix): it keeps the whole records (WholeRecords), truncates the torn tail, syncs the file and renames
// it to its final name, so WARC tools, which skip ".open" files, see every record it held. A file with no whole
// record is removed. The caller makes sure no live Writer still writes the file (New recovers only files no
// process holds locked).
func RecoverFile(path string) (Recovered, error) {
	if !strings.HasSuffix(path, OpenSuffix) {
		return Recovered{}, fmt.Errorf("warc: recover %s: not a %s file", path, OpenSuffix)
	}
	final := strings.TrimSuffix(path, OpenSuffix)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return Recovered{}, fmt.Errorf("warc: recover: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Recovered{}, fmt.Errorf("warc: recover: %w", err)
	}
	end, n, err := WholeRecords(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		return Recovered{}, fmt.Errorf("warc: recover %s: %w", path, err)
	}
	rec := Recovered{Records: n, Cut: st.Size() - end}
	if n == 0 {
		f.Close()
		if err := os.Remove(path); err != nil {
			return Recovered{}, fmt.Errorf("warc: recover: %w", err)
		}
		return rec, syncDir(filepath.Dir(path))
	}
	if _, err := os.Lstat(final); err == nil {
		return Recovered{}, fmt.Errorf("warc: recover %s: %s exists already", path, final)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Recovered{}, fmt.Errorf("warc: recover: %w", err)
	}
	if rec.Cut > 0 {
		if err := f.Truncate(end); err != nil {
			return Recovered{}, fmt.Errorf("warc: recover %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return Recovered{}, fmt.Errorf("warc: recover %s: %w", path, err)
	}
	if err := os.Rename(path, final); err != nil {
		return Recovered{}, fmt.Errorf("warc: recover: %w", err)
	}
	rec.File = final
	return rec, syncDir(filepath.Dir(path))
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("warc: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("warc: sync dir %s: %w", dir, err)
	}
	return nil
}

// recoverDir recovers the ".open" files of this Writer's prefix and host name in its directory that no live
// process holds (a Writer locks its open file), and logs what it did.
func (w *Writer) recoverDir() error {
	matches, err := filepath.Glob(filepath.Join(w.cfg.Dir, w.cfg.Prefix+"-*-"+w.host+".warc.gz"+OpenSuffix))
	if err != nil {
		return fmt.Errorf("warc: recover: %w", err)
	}
	var errs []error
	for _, path := range matches {
		unlock, free, err := tryLock(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !free {
			w.log.Info("warc file left open by a live writer; not recovered", "file", path)
			continue
		}
		rec, err := RecoverFile(path)
		unlock()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.recovered.Add(1)
		w.log.Warn("warc file left open by a killed writer recovered", "file", path, "finished_as", rec.File,
			"records", rec.Records, "cut_bytes", rec.Cut)
	}
	return errors.Join(errs...)
}
